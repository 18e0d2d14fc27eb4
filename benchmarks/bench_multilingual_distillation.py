"""The multilingual job's quantization-aware distillation under several flag sets, in one process.

The shipped setting (`split-h8k-k64`) is compressed once; for each `--config` (a string of
`examples/compress_multilingual.py` flags: `--learning-rate`, `--steps`,
`--sentence-loss-weight`, `--pair-loss-weight`, `--int4-recipe`, `--runs`, ...) its weights are
reset to the compressed ones, it is distilled as the job distils it (`job.distil`, with the
transformer's kernels rounded as `--int4-recipe` stores them), its kernels are rounded in place
(`round_weights`) and it is evaluated with the job's evaluation against the teacher. Keras with
rounded kernels is what the int4 file computes (RESULTS.md, "Session 2026-11-27 (third)"), so
each config costs one distillation, not a job. Runs differ in their dropout draws only
(`keras.utils.set_random_seed` is called once, before any tokenizer is made: see README).

    python -m pip install --no-deps "wagtail==8.0.1"
    python benchmarks/bench_multilingual_distillation.py \
        --config "--sentence-loss-weight 4 --steps 120" "--sentence-loss-weight 16 --steps 240"
"""

import argparse
import json
import pathlib
import shlex
import sys
import time

import keras

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
import compress_multilingual as job  # noqa: E402  the job's data, training and evaluation
from bench_gptq_rounding import summary  # noqa: E402

import keras_subembed  # noqa: E402
from keras_subembed import datasets  # noqa: E402
from keras_subembed import evaluation  # noqa: E402
from keras_subembed.models import load_text_embedder  # noqa: E402
from keras_subembed.models import token_weights  # noqa: E402
from keras_subembed.quantization import round_weights  # noqa: E402

SETTING = "split-h8k-k64"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", nargs="+", required=True,
                        help="one string of the job's flags per run")
    parser.add_argument("--output", type=pathlib.Path,
                        default=pathlib.Path("multilingual_distillation.json"))
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    configs = [(config, job.parse_args(["--settings", SETTING] + shlex.split(config)))
               for config in args.config]  # every config's flags checked before any work
    job_args = job.parse_args(["--settings", SETTING])
    keras.utils.set_random_seed(job_args.seed)
    # Each config's own draw (its alpha, its count), before any work: a missing catalog fails here.
    drawn = [job.draw_training_pairs(flags)[0] for _, flags in configs]
    teacher = load_text_embedder(datasets.multilingual_e5_preset_dir())
    training, held_out, english, translations, _ = job.load_data(job_args)
    sets = job.Evaluation(held_out, english, translations, teacher.preprocessor)
    reference = sets.measure(evaluation.keras_runner(teacher))
    kind, kwargs = job.SETTINGS[SETTING]
    student = keras_subembed.compress(
        teacher, kind, {**kwargs, "token_weights": token_weights(teacher, training)})
    compressed = [variable.numpy() for variable in student.weights]
    rows = [summary("teacher", reference, reference, 0.0)]
    for (config, flags), pairs in zip(configs, drawn):
        started = time.perf_counter()
        for variable, value in zip(student.weights, compressed):
            variable.assign(value)
        preprocessor = type(teacher.preprocessor)(teacher.preprocessor.tokenizer,
                                                  sequence_length=flags.sequence_length)
        losses = job.distil(teacher, student, preprocessor, training, pairs, flags,
                            flags.int4_recipe, runs=flags.runs)
        round_weights(student, flags.int4_recipe)
        scores = sets.measure(evaluation.keras_runner(student))
        rows.append({**summary(config or "(defaults)", scores, reference,
                               time.perf_counter() - started),
                     "losses": losses,
                     "english_to_locale_drops": {
                         locale: round(accuracy - reference["english_to_locale"]["accuracy"][locale], 3)
                         for locale, accuracy in scores["english_to_locale"]["accuracy"].items()}})
        print(json.dumps(rows[-1]), flush=True)
        args.output.write_text(json.dumps({"setting": SETTING, "rows": rows}, indent=1))
    columns = [("name", "flags (Keras, int4-rounded kernels)", "{}"),
               ("cosine_min", "cos min", "{:.4f}"), ("cosine_mean", "cos mean", "{:.4f}"),
               ("english_to_locale", "en->loc", "{:.3f}"),
               ("locale_to_english", "loc->en", "{:.3f}"), ("query_to_teacher", "q->T", "{:.3f}"),
               ("locales_5_below", "locales >5 below", "{}"), ("seconds", "s", "{:.0f}")]
    print("\n".join(evaluation.format_table(rows, columns)))


if __name__ == "__main__":
    main()
