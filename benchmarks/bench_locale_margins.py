"""Per-pair margins behind one locale's retrieval: which translations a student loses, and by how much the teacher had them.

For each English message of the recipe's evaluation (`parallel_messages` over the recipe's
default locales: all that every one of them translates, as `TextSets.multilingual` takes
them by default) the margin is the cosine of its translation minus the best wrong
translation's (> 0: retrieved). Prints, per `--locales`, the teacher's margins (how many pairs
it holds by less than 0.01 / 0.02) and each pair the student loses or gains, with both margins
and the wrong translation the student picked. `--recipe` rounds the student's kernels as that int4 recipe
stores them (what its int4 file computes).

    python benchmarks/bench_locale_margins.py multilingual_results/split-h8k-k64 --locales cs he
"""

import argparse
import json
import pathlib

import numpy as np

from multilingual_setup import load_teacher

from keras_subembed import evaluation
from keras_subembed.models import load_text_embedder
from keras_subembed.quantization import round_weights
from keras_subembed.recipe import DEFAULT_LOCALES
from keras_subembed.recipe.text_sets import parallel_messages


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("student", help="a preset folder a shrink wrote (its <setting>/)")
    parser.add_argument("--locales", nargs="+", default=["cs"])
    parser.add_argument("--recipe", default="int4_dynamic",
                        help="round the student's kernels as this recipe stores them ('none': float)")
    parser.add_argument("--output", type=pathlib.Path, default=None)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    # The recipe's default locales: the messages are those every one of them translates.
    unknown = sorted(set(args.locales) - set(DEFAULT_LOCALES))
    if unknown:
        raise SystemExit(f"--locales {unknown}: not among the recipe's {list(DEFAULT_LOCALES)}")
    teacher = load_teacher()
    student = load_text_embedder(args.student)
    if args.recipe != "none":
        round_weights(student, args.recipe)
    english, translations = parallel_messages(DEFAULT_LOCALES)

    def embed(model, texts):
        return evaluation.TokenizedTexts(texts, teacher.preprocessor).embed(
            evaluation.keras_runner(model))

    report = {}
    vectors = {name: embed(model, english) for name, model in (("teacher", teacher),
                                                                ("student", student))}
    for locale in args.locales:
        texts = translations[locale]
        teacher_margin, _ = evaluation.translation_margins(vectors["teacher"],
                                                            embed(teacher, texts))
        student_margin, picked = evaluation.translation_margins(vectors["student"],
                                                                embed(student, texts))
        changed = [{"english": english[i], "translation": texts[i],
                    "student_picked": texts[picked[i]],
                    "teacher_margin": round(float(teacher_margin[i]), 4),
                    "student_margin": round(float(student_margin[i]), 4)}
                   for i in np.flatnonzero((teacher_margin > 0) != (student_margin > 0))]
        held = teacher_margin[teacher_margin > 0]
        report[locale] = {"teacher_recall": float(np.mean(teacher_margin > 0)),
                          "student_recall": float(np.mean(student_margin > 0)),
                          "teacher_held_by_under_0.01": int(np.sum(held < 0.01)),
                          "teacher_held_by_under_0.02": int(np.sum(held < 0.02)),
                          "pairs": len(texts), "changed": changed}
        print(f"{locale}: teacher {report[locale]['teacher_recall']:.3f}, student "
              f"{report[locale]['student_recall']:.3f}; the teacher holds {held.size} pairs, "
              f"{report[locale]['teacher_held_by_under_0.01']} by < 0.01 cosine and "
              f"{report[locale]['teacher_held_by_under_0.02']} by < 0.02")
        for pair in changed:
            verdict = "lost" if pair["teacher_margin"] > 0 else "gained"
            print(f"  {verdict}: teacher {pair['teacher_margin']:+.3f}, student "
                  f"{pair['student_margin']:+.3f}  {pair['english']!r} -> {pair['translation']!r}"
                  f" (student picked {pair['student_picked']!r})")
    if args.output:
        args.output.write_text(json.dumps(report, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
