"""The one-way floors of the package hold (`[importlinter]` in setup.cfg).

import-linter reads the imports of the source files without running them: a
check costs about a second, TensorFlow never loads.
"""

import ast
import configparser
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "keras_subembed"

pytest.importorskip("importlinter")

LINT = (
    "import sys\n"
    "from importlinter.application.use_cases import lint_imports\n"
    "from importlinter.configuration import configure\n"
    "configure()\n"
    "sys.exit(0 if lint_imports(config_filename='setup.cfg', no_logo=True, cache_dir=None) "
    "else 1)\n"
)


def lint_imports(folder):
    """`lint-imports` over the package in `folder` (which holds setup.cfg): (exit code, output)."""
    result = subprocess.run([sys.executable, "-c", LINT], cwd=folder, capture_output=True,
                            text=True, env={"PYTHONPATH": str(folder), "PATH": ""})
    return result.returncode, result.stdout + result.stderr


def test_the_import_contracts_are_kept():
    code, output = lint_imports(ROOT)
    assert code == 0, output
    config = configparser.ConfigParser(interpolation=None)
    config.read(ROOT / "setup.cfg")
    contracts = [name for name in config.sections() if name.startswith("importlinter:contract:")]
    assert len(contracts) >= 4
    assert f"Contracts: {len(contracts)} kept, 0 broken." in output, output


def test_an_upward_import_breaks_the_floors(tmp_path):
    shutil.copytree(PACKAGE, tmp_path / "keras_subembed",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "setup.cfg", tmp_path)
    layer = tmp_path / "keras_subembed" / "layers" / "group_linear.py"
    layer.write_text(layer.read_text() + "\nfrom keras_subembed.export import export_tflite\n")
    code, output = lint_imports(tmp_path)
    assert code == 1, output
    assert "One-way floors: nothing imports a higher floor BROKEN" in output, output
    assert "keras_subembed.layers.group_linear -> keras_subembed.export" in output, output


def test_one_export_format_importing_another_breaks_their_independence(tmp_path):
    # What two formats share goes below them (export/litert/, the pipeline), never in one of them.
    shutil.copytree(PACKAGE, tmp_path / "keras_subembed",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "setup.cfg", tmp_path)
    onnx_format = tmp_path / "keras_subembed" / "export" / "onnx" / "onnx_format.py"
    onnx_format.write_text(onnx_format.read_text()
                           + "\nfrom keras_subembed.export.tflite.tflite_format import int8_rounded\n")
    code, output = lint_imports(tmp_path)
    assert code == 1, output
    assert "The export formats (tflite, mediapipe, onnx) are independent BROKEN" in output, output
    assert "keras_subembed.export.onnx is not allowed to import" in output, output
    # The line wraps at 80 columns: compare without the breaks.
    assert ("keras_subembed.export.onnx.onnx_format -> keras_subembed.export.tflite.tflite_format"
            in " ".join(output.split())), output



def test_a_model_file_helper_importing_a_model_class_breaks_the_models_floors(tmp_path):
    # files/ (model folders, presets) sits below families/ (the model classes) inside models/.
    shutil.copytree(PACKAGE, tmp_path / "keras_subembed",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "setup.cfg", tmp_path)
    model_files = tmp_path / "keras_subembed" / "models" / "files" / "model_files.py"
    model_files.write_text(model_files.read_text() + "\nfrom keras_subembed.models.families."
                           "compressed_backbone import CompressedBackbone\n")
    code, output = lint_imports(tmp_path)
    assert code == 1, output
    flat = " ".join(output.split())
    assert ("Models: compression and training sit above the model families, above encoding "
            "and files BROKEN") in flat, output
    assert ("keras_subembed.models.files.model_files -> "
            "keras_subembed.models.families.compressed_backbone") in flat, output


def function_local_imports(path):
    """`(line, module)` of every import of this package inside a function or class body."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for inner in ast.walk(node):
                names = ([alias.name for alias in inner.names] if isinstance(inner, ast.Import)
                         else [inner.module or ""] if isinstance(inner, ast.ImportFrom) else [])
                found += [(inner.lineno, name) for name in names
                          if name.split(".")[0] == "keras_subembed" or inner.__dict__.get("level")]
    return found


def test_the_package_imports_its_own_modules_only_at_the_top():
    # A function-local import hides a cycle from import-linter; only optional
    # third-party packages (mediapipe, onnx, ...) are imported where they are used.
    found = {str(path.relative_to(ROOT)): imports for path in sorted(PACKAGE.rglob("*.py"))
             if (imports := function_local_imports(path))}
    assert found == {}
