"""The recipe's quantization-aware distillation under several flag sets, in one process.

The shipped setting (`split-h8k-k64` of `keras_subembed.recipe.SETTINGS`) is compressed once;
for each `--config` (a string of the recipe's flags, `python -m keras_subembed shrink --help`:
`--learning-rate`, `--steps`, `--sentence-loss-weight`, `--pair-loss-weight`,
`--quantization`, `--no-qat`, `--runs`, `--training-pairs`, `--pair-sampling-alpha`, ...) its
weights are reset to the compressed ones, it is distilled as the recipe distils it
(`keras_subembed.recipe.distil`, with the transformer's kernels rounded as `--quantization`
stores them unless `--no-qat`) on the config's own draw of training pairs, its kernels are
rounded in place (`round_weights`) and it is evaluated with the recipe's evaluation
(`LanguageEvaluation`) against the teacher. Every config trains on the defaults' prose and
is judged on the defaults' held-out text and messages: the text flags other than the pairs'
are the defaults' for all. Keras with rounded kernels is what the int4 file computes
(history/2026-results-diary.md, "Session 2026-11-27 (third)"), so each config costs one
distillation, not a job. Runs differ in their dropout draws only
(`keras.utils.set_random_seed` is called once, before any tokenizer is made: see README).

    python -m pip install --no-deps "wagtail==8.0.1"
    python benchmarks/bench_multilingual_distillation.py \
        --config "--sentence-loss-weight 4 --steps 120" "--sentence-loss-weight 16 --steps 240"
"""

import argparse
import json
import pathlib
import time

import keras

from multilingual_setup import SUMMARY_COLUMNS
from multilingual_setup import distillation_options
from multilingual_setup import drops
from multilingual_setup import language_evaluation
from multilingual_setup import load_teacher
from multilingual_setup import recipe_flags
from multilingual_setup import summary
from multilingual_setup import text_options
from multilingual_setup import text_sets

import keras_subembed
from keras_subembed import datasets
from keras_subembed import evaluation
from keras_subembed import recipe
from keras_subembed.models import token_weights
from keras_subembed.quantization import round_weights

SETTING = "split-h8k-k64"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", nargs="+", required=True,
                        help="one string of the recipe's flags per run")
    parser.add_argument("--output", type=pathlib.Path,
                        default=pathlib.Path("multilingual_distillation.json"))
    return parser.parse_args(argv)


def config_pairs(flags):
    """The config's own draw of training pairs (its catalog, count and alpha)."""
    options = text_options(flags)
    if options["training_catalog"] is None or not options["training_pairs"]:
        return []
    return datasets.draw_training_pairs(options["training_catalog"], options["training_pairs"],
                                        options["pair_sampling_alpha"], options["seed"])[0]


def main(argv=None):
    args = parse_args(argv)
    configs = [(config, recipe_flags(config))
               for config in args.config]  # every config's flags checked before any work
    defaults = recipe_flags()
    keras.utils.set_random_seed(defaults.seed)
    # Each config's own draw, before any work: a missing catalog fails here.
    drawn = [config_pairs(flags) for _, flags in configs]
    texts = text_sets(defaults)
    teacher = load_teacher()
    sets = language_evaluation(texts, teacher)
    reference = sets.measure(evaluation.keras_runner(teacher))
    kind, kwargs = recipe.SETTINGS[SETTING]
    student = keras_subembed.compress(
        teacher, kind, {**kwargs, "token_weights": token_weights(teacher, texts.training)})
    compressed = [variable.numpy() for variable in student.weights]
    rows = [summary("teacher", reference, reference, 0.0)]
    for (config, flags), pairs in zip(configs, drawn):
        started = time.perf_counter()
        for variable, value in zip(student.weights, compressed):
            variable.assign(value)
        losses = recipe.distil(teacher, student, texts.training, pairs,
                               **distillation_options(flags))
        round_weights(student, flags.quantization)
        scores = sets.measure(evaluation.keras_runner(student))
        rows.append({**summary(config or "(defaults)", scores, reference,
                               time.perf_counter() - started),
                     "losses": losses,
                     "english_to_locale_drops": {locale: round(drop, 3) for locale, drop
                                                 in drops(scores, reference).items()}})
        print(json.dumps(rows[-1]), flush=True)
        args.output.write_text(json.dumps({"setting": SETTING, "rows": rows}, indent=1))
    columns = [("name", "flags (Keras, int4-rounded kernels)", "{}")] + SUMMARY_COLUMNS
    print("\n".join(evaluation.format_table(rows, columns)))


if __name__ == "__main__":
    main()
