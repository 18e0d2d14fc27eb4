"""Benchmarks and tests import the package, never an example script (issue #43).

An example is a user's script: what a benchmark measures or a test checks must come from
`keras_subembed` (or a benchmark-local helper beside the benchmarks), so that rewriting an
example cannot silently change, or break, a measurement. Only `tests/examples/` runs the
examples, as a user would: in a subprocess (the bad-flag checks call a job's `main` in the
test process).
"""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# A path to examples/ put on sys.path, or an example loaded from its file.
LOADS_AN_EXAMPLE = (
    re.compile(r"sys\.path[^\n]*examples"),
    re.compile(r"spec_from_file_location\([^)]*examples", re.DOTALL),
    re.compile(r"SourceFileLoader\([^)]*examples", re.DOTALL),
    re.compile(r"run_path\([^)]*examples", re.DOTALL),
)


def checked_files():
    files = sorted((ROOT / "benchmarks").glob("*.py")) + sorted((ROOT / "tests").rglob("*.py"))
    return [path for path in files
            if (ROOT / "tests" / "examples") not in path.parents
            and path != pathlib.Path(__file__).resolve()]


def example_loads(text):
    return [match.group(0) for pattern in LOADS_AN_EXAMPLE for match in pattern.finditer(text)]


@pytest.mark.parametrize("pattern_text", [
    'sys.path.insert(0, str(ROOT / "examples"))',
    'sys.path[:0] = [str(ROOT), str(ROOT / "examples")]',
    'sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))',
    'SPEC = importlib.util.spec_from_file_location(\n    "train_mlm", ROOT / "examples" / "x.py")',
])
def test_the_check_finds_each_way_the_benchmarks_loaded_examples(pattern_text):
    assert example_loads(pattern_text)


def test_the_check_leaves_prose_and_other_paths_alone():
    assert not example_loads('"""As `examples/train_mlm.py` does."""\nsys.path.insert(0, ROOT)')


def test_no_benchmark_or_test_loads_an_example_script():
    assert len(checked_files()) > 20  # the benchmarks and the tests were found
    offenders = {str(path.relative_to(ROOT)): found for path in checked_files()
                 if (found := example_loads(path.read_text(encoding="utf-8")))}
    assert not offenders, (
        "Import from keras_subembed (or a helper in benchmarks/) instead of an example "
        f"script: {offenders}")
