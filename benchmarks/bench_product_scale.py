"""Product codes for the vocabularies of recommendation and location models: time and peak memory.

A random float32 table of `--ids` rows (default 2,000,000 x 64, a
recommender's item table) is coded by `product_codes` (K=8 sub-spaces of
M=256 centroids by default), with and without per-token weights (a Zipf
popularity, as item logs give). Centroids are fitted on at most
`max_points_per_center` ids per centroid, then every id is coded against them
in chunks, so memory stays near the table's own size. Peak memory is the
process's peak resident set (the table included), read from the OS.

    python benchmarks/bench_product_scale.py
    python benchmarks/bench_product_scale.py --ids 200000 --width 32 --tables 4
"""

import argparse
import json
import pathlib
import resource
import sys
import time

import numpy as np

from keras_subembed.assignment import least_squares_sub_tables
from keras_subembed.assignment import product_codes
from keras_subembed.assignment import reconstruction_quality
from keras_subembed.assignment import sub_widths


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", type=int, default=2_000_000)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--rows", type=int, default=256)
    parser.add_argument("--weights", choices=["none", "zipf"], default="none")
    parser.add_argument("--output", help="append the row as JSON to this file")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def peak_rss_gb():
    # Linux reports kilobytes.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def main(argv=None):
    args = parse_args(argv)
    rng = np.random.default_rng(args.seed)
    table = rng.normal(size=(args.ids, args.width)).astype(np.float32)
    weights = None
    if args.weights == "zipf":
        weights = 1.0 / np.sqrt(1.0 + rng.permutation(args.ids))
    print(f"table {args.ids:,} x {args.width} float32 ({table.nbytes / 1e9:.2f} GB); "
          f"peak RSS before coding {peak_rss_gb():.2f} GB", flush=True)
    start = time.perf_counter()
    codes = product_codes(table, args.tables, args.rows, seed=args.seed, token_weights=weights,
                          verbose=True)
    seconds = time.perf_counter() - start
    peak = peak_rss_gb()
    sub_tables = least_squares_sub_tables(
        table, codes, args.rows, sub_widths(args.width, args.tables), weights)
    sample = rng.choice(args.ids, min(args.ids, 100_000), replace=False)
    rebuilt = np.concatenate([sub[codes[sample, k]] for k, sub in enumerate(sub_tables)], axis=1)
    row = {
        "ids": args.ids, "width": args.width, "num_tables": args.tables,
        "rows_per_table": args.rows, "weights": args.weights,
        "seconds": round(seconds, 1), "peak_rss_gb": round(peak, 2),
        "table_gb": round(table.nbytes / 1e9, 2),
        # Reconstruction of 100,000 sampled rows: random data has no structure
        # to find, so this only shows the codes are sane, not a quality figure.
        "token_cosine_sample": round(
            reconstruction_quality(table[sample], rebuilt)["mean_cosine"], 4),
    }
    print(json.dumps(row), flush=True)
    if args.output:
        with pathlib.Path(args.output).open("a") as file:
            file.write(json.dumps(row) + "\n")
    return row


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
