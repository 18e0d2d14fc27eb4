"""The size frontier on the fine evaluation: files that shrinks shipped before, each evaluated
again on 600 messages in each of 45 locales (`--evaluation fine`, Django's 177 beside), against
the teacher measured once.

Each `--point FOLDER COMMAND` is a shrink's output folder (its report.json names its files)
and the command that made it. Every file of `--formats` in it is evaluated into
`--output/FOLDER_NAME/` (a report as `shrink` writes one: the teacher's row and the file's);
a point whose report is there already is not evaluated again. The teacher's vectors are kept
in `--output/teacher/`, so a later point costs only its own file's pass. Writes
`frontier.md` and `frontier.png` into `--output`:

    python benchmarks/bench_fine_frontier.py --output fine_frontier \\
        --point frontier_runs/product-k48m256-rotated \\
        "python -m keras_subembed shrink --setting product-k48m256-rotated ..."
"""

import argparse
import json
import pathlib
import time

import numpy as np
from bench_frontier import MARKS
from bench_frontier import write_frontier
from multilingual_setup import language_evaluation
from multilingual_setup import load_teacher
from multilingual_setup import recipe_flags
from multilingual_setup import text_sets

from keras_subembed import files
from keras_subembed.evaluation import TokenizedTexts
from keras_subembed.evaluation import keras_runner
from keras_subembed.evaluation import write_language_report
from keras_subembed.evaluation.size_frontier import SizeFrontier
from keras_subembed.recipe.shipping import file_runner


def say(text):
    print(time.strftime("%H:%M:%S"), text, flush=True)


class TeacherVectors:
    """The teacher's vectors by text, kept in `folder` (texts.json, vectors.npy) between runs:
    the Keras teacher is the evaluation's slowest pass. Reused only while the teacher still
    gives them (`covers`)."""

    def __init__(self, folder):
        self.folder = folder
        texts = files.read_json_object(folder / "texts.json").get("texts") or []
        vectors = np.load(folder / "vectors.npy") if texts else np.zeros((0, 0), "float32")
        self.row_of = {text: row for row, text in enumerate(texts)}
        self.vectors = vectors

    def covers(self, evaluation, teacher):
        """Whether every text is kept, by this teacher: the first texts are embedded again
        and must match, so vectors of another teacher (or version) are never reused."""
        if not all(text in self.row_of for texts in evaluation.texts.values() for text in texts):
            return False
        probe = next(iter(evaluation.texts.values()))[:16]
        again = TokenizedTexts(probe, teacher.preprocessor).embed(keras_runner(teacher))
        return bool(np.abs(np.asarray(again) - self.embed(probe)).max() < 1e-4)

    def embed(self, texts):
        return self.vectors[[self.row_of[text] for text in texts]]

    def save(self, evaluation):
        """Keeps the vectors of the evaluation's reference (its first model measured)."""
        texts, rows = [], []
        for name, vectors in evaluation.reference["vectors"].items():
            texts += evaluation.texts[name]
            rows.append(vectors)
        self.folder.mkdir(parents=True, exist_ok=True)
        np.save(self.folder / "vectors.npy", np.concatenate(rows).astype("float32"))
        (self.folder / "texts.json").write_text(json.dumps({"texts": texts}), encoding="utf-8")


def evaluate_point(folder, command, evaluation, teacher_row, formats, output):
    """`folder`'s files of `formats` on `evaluation`, into a report in `output`; returns
    the report's folder."""
    shipped = files.read_json_object(folder / "report.json").get("rows") or []
    rows = [teacher_row]
    for row in shipped:
        if row.get("format") not in formats or not row.get("file_mb"):
            continue
        path = folder / row["name"]
        if not path.is_file():
            raise SystemExit(f"{folder}/report.json names {row['name']}, which is not there.")
        say(f"Evaluating {path}")
        started = time.perf_counter()
        measured = evaluation.measure(**file_runner(row["format"], path))
        # Two shrinks of one setting ship files of one name: the folder tells them apart.
        name = row["name"] if row["name"].startswith(f"{folder.name}.") else (
            f"{folder.name}/{row['name']}")
        rows.append({"name": name, "file_mb": row["file_mb"], "format": row["format"],
                     "seconds": round(time.perf_counter() - started, 1), **measured})
    if len(rows) == 1:
        raise SystemExit(f"{folder}/report.json lists no file of {formats}.")
    write_language_report(rows, output, overwrite=True, title=(
        f"{folder.name} on the fine evaluation ({command})"))
    return output


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--point", nargs=2, action="append", required=True,
                        metavar=("FOLDER", "COMMAND"),
                        help="a shrink's output folder, and the command that made it")
    parser.add_argument("--formats", nargs="+", default=["tflite"],
                        choices=("tflite", "mediapipe", "onnx"))
    parser.add_argument("--flags", default="--evaluation fine",
                        help="the recipe's text flags (default: the fine evaluation)")
    parser.add_argument("--output", type=pathlib.Path, default=pathlib.Path("fine_frontier"))
    args = parser.parse_args()
    texts = text_sets(recipe_flags(args.flags))
    say(texts.summary())
    teacher = load_teacher()
    evaluation = language_evaluation(texts, teacher)
    cache = TeacherVectors(args.output / "teacher")
    if cache.covers(evaluation, teacher):
        say(f"The teacher's vectors from {cache.folder}")
        teacher_row = evaluation.measure(embed_texts=cache.embed)
    else:
        say(f"Evaluating the teacher on {evaluation.text_count:,} texts")
        teacher_row = evaluation.measure(keras_runner(teacher))
        cache.save(evaluation)
    teacher_row = {"name": "teacher (Keras)", "reference": True, **teacher_row}
    frontier = SizeFrontier(marks=MARKS, targets=(20, 16))
    for folder, command in args.point:
        folder = pathlib.Path(folder)
        report = args.output / folder.name
        if not (report / "report.json").is_file():
            evaluate_point(folder, command, evaluation, teacher_row, args.formats, report)
        frontier.add_report(report, command=command)
    print(write_frontier(frontier, args.output, "multilingual-e5-small on the fine evaluation "
                         "(45 locales x 600 messages), by file size"))


if __name__ == "__main__":
    main()
