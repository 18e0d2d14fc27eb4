"""Masked-LM training step time per token embedding, with and without XLA.

The main job's encoder (V = 30,522, 4 layers, hidden 256, sequence 128,
batch 16, 19 masked positions per sequence, keras-hub `RobertaMaskedLM` tied
head, AdamW) trained with `train_on_batch` on a fixed batch. For each
repeat, every embedding is timed in turn (interleaved, so machine noise
spreads over all rows); the table gives the median seconds per step and the
ratio to the dense embedding measured in the same run. Held-out quality is in
`examples/train_mlm.py`'s table. With `--backend jax` only the XLA rows
(`jax.jit`) are measured: JAX has no non-XLA graph mode.

    python benchmarks/bench_mlm.py [--backend jax] [--steps 10] [--repeats 5] [--json out.json]
"""

import argparse
import json
import os
import platform
import statistics
import time

from backend_choice import add_backend_argument
from backend_choice import select_backend

BACKEND = select_backend()

import keras  # noqa: E402
import numpy as np  # noqa: E402

from keras_subembed.models import CompressedRobertaBackbone  # noqa: E402
from keras_subembed.models import CompressedRobertaMaskedLM  # noqa: E402

VOCAB = 30_522
RESERVED = [0, 100, 101, 102, 103]
EMBEDDINGS = {
    "embedding": ("embedding", {}),
    "sub digits K=3 M=100": ("sub", dict(num_tables=3, rows_per_table=100, reserved_ids=RESERVED)),
    "sub stored codes K=3 M=100": ("sub", dict(num_tables=3, rows_per_table=100, assignment="random",
                                                seed=0, reserved_ids=RESERVED)),
    "alone": ("alone", dict(ffn_dim=512, seed=0)),
    "define": ("define", dict(map_dim=64, expand_dim=512, depth=3)),
}


def fixed_batch(batch, length, masks, seed=0):
    rng = np.random.default_rng(seed)
    x = {
        "token_ids": rng.integers(1000, VOCAB, size=(batch, length)).astype("int32"),
        "padding_mask": np.ones((batch, length), "int32"),
        "mask_positions": np.sort(
            np.stack([rng.choice(length, masks, replace=False) for _ in range(batch)]), axis=1
        ).astype("int32"),
    }
    return x, rng.integers(1000, VOCAB, size=(batch, masks)).astype("int32")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10, help="timed steps per repeat")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--sequence", type=int, default=128)
    parser.add_argument("--json", help="write the rows here")
    add_backend_argument(parser)
    args = parser.parse_args()
    x, y = fixed_batch(args.batch, args.sequence, int(round(0.15 * args.sequence)))
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Keras {keras.__version__}, backend {BACKEND}", flush=True)
    rows = []
    for xla in (True,) if BACKEND == "jax" else (False, True):
        models = {}
        for name, (kind, kwargs) in EMBEDDINGS.items():
            keras.utils.set_random_seed(0)
            backbone = CompressedRobertaBackbone(
                VOCAB, num_layers=4, num_heads=4, hidden_dim=256, intermediate_dim=512,
                max_sequence_length=args.sequence, embedding=kind, embedding_kwargs=kwargs)
            model = CompressedRobertaMaskedLM(backbone)
            model.compile(optimizer=keras.optimizers.AdamW(1e-4), jit_compile=xla)
            model.train_on_batch(x, y)  # trace / compile
            model.train_on_batch(x, y)
            models[name] = model
        seconds = {name: [] for name in models}
        for _ in range(args.repeats):
            for name, model in models.items():
                start = time.perf_counter()
                for _ in range(args.steps):
                    model.train_on_batch(x, y)
                seconds[name].append((time.perf_counter() - start) / args.steps)
        baseline = statistics.median(seconds["embedding"])
        for name in models:
            step = statistics.median(seconds[name])
            rows.append(dict(backend=BACKEND, embedding=name, xla=xla, seconds_per_step=step,
                             tokens_per_second=args.batch * args.sequence / step,
                             ratio_to_dense=step / baseline))
            print(f"  xla={xla!s:<5} {name:<28} {step * 1000:8.1f} ms/step  x{step / baseline:.2f}",
                  flush=True)
        del models
    print()
    print("| backend | embedding | XLA | ms / step (median) | tokens/s | step time vs dense |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {BACKEND} | {row['embedding']} | {row['xla']} | {row['seconds_per_step'] * 1000:.0f} "
              f"| {row['tokens_per_second']:,.0f} | {row['ratio_to_dense']:.2f}x |")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=2)


if __name__ == "__main__":
    main()
