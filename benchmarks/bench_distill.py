"""Distillation step time of all-MiniLM-L6-v2 students, per setting and stage, with and without XLA.

The recipe's two stages (`keras_subembed.recipe.distil`): "embedding"
(embedding only, loss on the embedding output: no transformer layer runs)
and "full" (every weight, losses on the embedding output, the last hidden
state and the mean-pooled sentence vectors). Batches of `--batch-size`
sentences of `--sequence-length` tokens (fixed random ids: the step time does
not depend on the text). Codes are random rather than clustered (the same
graph, without the clustering time). Reports the median seconds per step
after the first (compiling) step, over `--steps` steps.

    python benchmarks/bench_distill.py [--settings sub-k2m768 sub-k3m34] [--steps 6]
"""

import argparse
import copy
import json
import os
import platform
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

from minilm_setup import SETTINGS  # noqa: E402  (clustered codes and DeFINE too)

from keras_subembed.datasets import minilm_preset_dir  # noqa: E402
from keras_subembed.models import EmbeddingDistiller  # noqa: E402
from keras_subembed.models import compress_backbone  # noqa: E402

STAGES = {
    "embedding": dict(state_layers=(0,), sentence_loss_weight=0.0, train="embedding"),
    "full": dict(state_layers=(0, -1), sentence_loss_weight=1.0, train="all"),
}


def with_random_codes(kind, kwargs):
    kwargs = copy.deepcopy(kwargs)  # SETTINGS stay as they are
    target = kwargs["map_layer"] if kind == "define" else kwargs
    target.update(assignment="random", seed=0)
    return kwargs


def step_seconds(distiller, batch, steps):
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        distiller.train_on_batch(batch)
        times.append(time.perf_counter() - start)
    return statistics.median(times[1:]), times[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settings", nargs="+", default=["sub-k2m768", "sub-k3m34"],
                        choices=sorted(SETTINGS))
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sequence-length", type=int, default=32)
    parser.add_argument("--json", help="also write the rows here")
    args = parser.parse_args()

    import keras_hub

    teacher = keras_hub.models.BertBackbone.from_preset(str(minilm_preset_dir()))
    rng = np.random.default_rng(0)
    shape = (args.batch_size, args.sequence_length)
    batch = {"token_ids": rng.integers(1000, 30_000, shape).astype("int32"),
             "padding_mask": np.ones(shape, "int32")}
    rows = []
    for name in args.settings:
        kind, kwargs = SETTINGS[name]
        student = compress_backbone(teacher, kind, with_random_codes(kind, kwargs))
        for stage, settings in STAGES.items():
            for xla in (True, False):
                distiller = EmbeddingDistiller(teacher, student, **settings)
                distiller.compile(jit_compile=xla)
                median, first = step_seconds(distiller, batch, args.steps)
                rows.append({"setting": name, "stage": stage, "xla": xla,
                             "seconds_per_step": round(median, 4), "first_step": round(first, 2)})
                print(rows[-1], flush=True)
    print(f"\n{platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"batch {args.batch_size} x {args.sequence_length} tokens, median of "
          f"{args.steps - 1} steps after the first\n")
    print("| setting | stage | XLA s/step | no-XLA s/step | XLA speed-up |")
    print("|---|---|---|---|---|")
    for name in args.settings:
        for stage in STAGES:
            xla, eager = (next(r["seconds_per_step"] for r in rows
                               if r["setting"] == name and r["stage"] == stage and r["xla"] is x)
                          for x in (True, False))
            print(f"| {name} | {stage} | {xla:.3f} | {eager:.3f} | {eager / xla:.2f}x |")
    if args.json:
        with open(args.json, "w") as file:
            json.dump(rows, file, indent=2)


if __name__ == "__main__":
    main()
