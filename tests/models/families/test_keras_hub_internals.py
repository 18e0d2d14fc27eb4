"""keras-hub's private code is imported in one documented module only."""

import pathlib
import re

import keras_subembed
from keras_subembed.models.families import keras_hub_internals

PACKAGE = pathlib.Path(keras_subembed.__file__).parent
PRIVATE_IMPORT = re.compile(r"^\s*(from|import)\s+keras_hub\.src\b", re.MULTILINE)


def test_only_keras_hub_internals_imports_keras_hub_src():
    importers = sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                       if PRIVATE_IMPORT.search(path.read_text(encoding="utf-8")))
    assert importers == ["models/families/keras_hub_internals.py"]


def test_every_private_name_is_documented_where_it_is_imported():
    names = re.findall(r"import (\w+)", "\n".join(
        line for line in pathlib.Path(keras_hub_internals.__file__).read_text().splitlines()
        if "keras_hub.src" in line))
    assert names and all(f"`{name}`" in keras_hub_internals.__doc__ for name in names)
    assert all(callable(getattr(keras_hub_internals, name)) for name in names)
