"""Ship and evaluate the student a shrink saved, as the shrink would have: for a shrink of the
built-in multilingual-e5-small (default text options) whose export failed after training.

`shrink` saves the distilled student as a preset (`OUTPUT/SETTING/`) before it exports. This
runs what follows in `shrink` on that preset: the same evaluation (`TextSets.multilingual`,
the teacher as the reference), the Keras student's row, `ship` to `--formats` with
`--quantization`, each file's row, and `write_language_report` with the measured frontier.

    python benchmarks/ship_saved_student.py frontier_runs/product-k30m256-rotated \\
        product-k30m256-rotated
"""

import argparse
import pathlib
import time

from multilingual_setup import language_evaluation
from multilingual_setup import recipe_flags
from multilingual_setup import text_sets

from keras_subembed.evaluation import keras_runner
from keras_subembed.evaluation import write_language_report
from keras_subembed.models import load_text_embedder
from keras_subembed.recipe.measured_frontier import measured_frontier
from keras_subembed.recipe.shipping import file_runner
from keras_subembed.recipe.shipping import ship
from keras_subembed.recipe.shrink import load_model

MODEL = "multilingual-e5-small"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=pathlib.Path, help="the shrink's --output folder")
    parser.add_argument("setting", help="the shrink's setting (its preset's folder name)")
    parser.add_argument("--formats", nargs="+", default=["tflite"])
    parser.add_argument("--quantization", default="int4_dynamic")
    args = parser.parse_args(argv)

    def say(text):
        print(time.strftime("%H:%M:%S"), text, flush=True)

    teacher = load_model(MODEL)
    evaluation = language_evaluation(text_sets(recipe_flags()), teacher)
    say(f"Evaluating the teacher on {evaluation.text_count:,} held-out texts")
    rows = [{"name": "teacher (Keras)", "reference": True,
             **evaluation.measure(keras_runner(teacher))}]
    frontier = measured_frontier(MODEL)
    student = load_text_embedder(args.output / args.setting)
    say(f"Evaluating {args.setting} (Keras)")
    rows.append({"name": f"{args.setting} (Keras)", **evaluation.measure(keras_runner(student))})
    reports = ship(student, args.output, args.setting, args.formats, args.quantization,
                   overwrite=True)
    for label, report in reports.items():
        say(f"Evaluating {pathlib.Path(report.path).name}")
        rows.append({"name": pathlib.Path(report.path).name,
                     "file_mb": round(report.file_bytes / 1e6, 2), "format": label,
                     "latency_ms": report.latency_ms, "sequence_length": report.sequence_length,
                     **evaluation.measure(**file_runner(label, report.path))})
    title = (f"{MODEL} -> {args.setting}: recall@1 per locale and held-out cosine per "
             "language, against the teacher")
    write_language_report(rows, args.output, title=title, overwrite=True, frontier=frontier)
    say(f"Wrote {args.output}/report.md")


if __name__ == "__main__":
    main()
