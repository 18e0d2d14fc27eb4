"""Time `clustered_codes` on the real MiniLM table and on an XLM-R-sized table.

Cases (balanced, cosine, seed 0), each timed once end to end (k-means runs are
the cost; repeat the command for more samples):
  * MiniLM 30,522 x 384, K=3, M=100 (the paper's clustered setting);
  * MiniLM, K=3, M=32 (tight: 32^3 = 32,768 >= 30,522);
  * synthetic 250,002 x 768 Gaussian-mixture table, K=3, M=63 (`--xlmr`);
  * scaling: MiniLM subsampled to 1/4 and 1/2 of its rows, K=3, M=100.

    python benchmarks/bench_clustering.py [--xlmr]
"""

import argparse
import os
import platform
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

from keras_subembed.assignment import check_codes  # noqa: E402
from keras_subembed.assignment import clustered_codes  # noqa: E402
from keras_subembed.datasets import minilm_word_embeddings  # noqa: E402


def timed(name, table, num_tables, rows):
    start = time.perf_counter()
    codes = clustered_codes(table, num_tables, rows, balanced=True, seed=0)
    seconds = time.perf_counter() - start
    check_codes(codes, rows, table.shape[0], num_tables)
    print(f"| {name} | {table.shape[0]:,} x {table.shape[1]} | {num_tables} | {rows} | {seconds:.1f} |",
          flush=True)
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--xlmr", action="store_true", help="also the 250,002 x 768 table")
    args = parser.parse_args()
    print(f"# {platform.machine()}, {os.cpu_count()} CPUs")
    print("| case | table | K | M | seconds |\n|---|---|---|---|---|")
    table = minilm_word_embeddings()
    rng = np.random.default_rng(0)
    for fraction in (4, 2):
        subset = table[rng.permutation(table.shape[0])[: table.shape[0] // fraction]]
        timed(f"MiniLM 1/{fraction} rows", subset, 3, 100)
    timed("MiniLM", table, 3, 100)
    timed("MiniLM tight", table, 3, 32)
    if args.xlmr:
        centers = rng.normal(size=(2000, 768)).astype(np.float32)
        synthetic = centers[rng.integers(0, 2000, 250_002)]
        synthetic += 0.5 * rng.normal(size=synthetic.shape).astype(np.float32)
        timed("synthetic XLM-R size", synthetic, 3, 63)


if __name__ == "__main__":
    main()
