"""Which codes keep most of all-MiniLM-L6-v2 per byte? A sweep of assignments x K x M.

For every assignment (digits, random, clustered, product) and every (K, M) of
the grid whose stored bytes (sub-tables and codes, packed when M <= 16) fit
the byte budget, the 30,522 x 384 token table is compressed by
`SubEmbedding.from_pretrained` and the **undistilled** student is measured:
token reconstruction cosine (mean over rows), and the mean cosine of its
sentence vectors to the teacher's on held-out sentences in and out of
domain (the English job's evaluation sets, `minilm_setup.load_data`). No
training: the student is the teacher with its token table replaced by the
compressed layer's table (a lookup of it gives the same vectors as the layer).

    python benchmarks/bench_codes.py --output benchmarks/codes
    python benchmarks/bench_codes.py --assignments product --tables 8 16 32 --rows 256

Token weights (`--weights`): `none` clusters every token alike; `sqrt` and
`count` weigh each token by `(count + 1) ** 0.5` or `(count + 1)`, counted
with the teacher's tokenizer over the main job's *training* text
(`keras_subembed.models.token_weights`): product codes run weighted k-means
and every assignment's sub-tables are weighted least-squares fits.

Row scales (`--row-scales on`): `SubEmbedding(row_scales=True)`, each
rebuilt row scaled back to its pretrained norm by one of 256 levels (one
more byte per token, counted in the bytes).

Writes `<output>/codes.json` and `<output>/codes_pareto.png` (out-of-domain
cosine vs bytes, the Pareto front marked), and prints the table.
"""

import argparse
import itertools
import json
import os
import pathlib
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from minilm_setup import RESERVED_IDS  # noqa: E402  (the English job's data splits)
from minilm_setup import load_data  # noqa: E402
from minilm_setup import load_teacher  # noqa: E402

from keras_subembed import evaluation  # noqa: E402
from keras_subembed.assignment import reconstruction_quality  # noqa: E402
from keras_subembed.assignment import minimum_rows_per_table  # noqa: E402
from keras_subembed.layers import SubEmbedding  # noqa: E402
from keras_subembed.models import token_weights  # noqa: E402

ASSIGNMENTS = ("digits", "random", "clustered", "product")
WEIGHTS = {"none": None, "sqrt": 0.5, "count": 1.0}  # the power of (count + 1)
MARKERS = {"none": "o", "sqrt": "^", "count": "s"}
COLORS = {"digits": "tab:gray", "random": "tab:orange", "clustered": "tab:green",
          "product": "tab:blue"}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="codes_results")
    parser.add_argument("--assignments", nargs="+", default=list(ASSIGNMENTS), choices=ASSIGNMENTS)
    parser.add_argument("--tables", nargs="+", type=int, default=[2, 3, 4, 8, 16, 24, 32, 48])
    parser.add_argument("--rows", nargs="+", type=int, default=[16, 34, 64, 256, 768])
    parser.add_argument("--max-distinct-tables", type=int, default=4,
                        help="largest K for digits, random and clustered codes (the paper's "
                             "range; clustered codes' recursive levels get slow beyond it)")
    parser.add_argument("--min-compression", type=float, default=20.0,
                        help="byte budget: keep settings at least this many times smaller")
    parser.add_argument("--max-compression", type=float, default=1000.0)
    parser.add_argument("--weights", nargs="+", default=["none", "sqrt"], choices=sorted(WEIGHTS),
                        help="token weights from the training text's token counts")
    parser.add_argument("--row-scales", nargs="+", default=["off"], choices=["off", "on"],
                        help="also store one byte of length per token (product codes only)")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def stored_bytes(num_ids, width, num_tables, rows, assignment, row_scales=False):
    """Bytes of the layer's weights, from a layer with placeholder codes (no clustering)."""
    stored = "explicit" if assignment in ("clustered", "product") else assignment
    layer = SubEmbedding(num_ids, width, num_tables=num_tables, rows_per_table=rows,
                         assignment=stored, seed=0, row_scales=row_scales)
    return layer.compression_report().stored_bytes


def feasible(num_ids, num_tables, rows, assignment, num_reserved, max_distinct_tables):
    """Distinct-code assignments need M^K codes for V ids; product codes need M > R."""
    if assignment == "product":
        return rows > num_reserved
    if num_tables > max_distinct_tables:
        return False
    return rows >= minimum_rows_per_table(num_ids, num_tables, num_reserved)


def main(argv=None):
    args = parse_args(argv)
    output = pathlib.Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    teacher = load_teacher()
    data = load_data(args.seed)
    sets = {name: evaluation.TokenizedTexts(data[name], teacher.preprocessor)
            for name in ("in_domain", "out_of_domain")}
    # One XLA program per batch shape, reused for every setting: only the
    # token table's values change between settings. One trace with dynamic
    # shapes (reduce_retracing), not one per batch length: XLA still compiles per shape.
    encode = tf.function(evaluation.keras_runner(teacher), jit_compile=True,
                         reduce_retracing=True)

    def run(ids, mask):
        return encode(tf.constant(ids), tf.constant(mask))
    embedding = teacher.backbone.token_embedding
    table = np.asarray(keras.ops.convert_to_numpy(embedding.embeddings))
    reference = {name: tokenized.embed(run) for name, tokenized in sets.items()}
    num_ids, width = table.shape
    dense_bytes = table.nbytes
    reserved = RESERVED_IDS
    weights = {name: None if power is None else token_weights(teacher, data["training"], power)
               for name, power in WEIGHTS.items() if name in args.weights}

    rows = []
    for assignment, weighting, scales in itertools.product(
            args.assignments, args.weights, args.row_scales):
        row_scales = scales == "on"
        if row_scales and assignment != "product":
            continue
        for num_tables in args.tables:
            for rows_per_table in args.rows:
                if num_tables > width or not feasible(
                        num_ids, num_tables, rows_per_table, assignment, len(reserved),
                        args.max_distinct_tables):
                    continue
                size = stored_bytes(num_ids, width, num_tables, rows_per_table, assignment,
                                    row_scales)
                if not args.min_compression <= dense_bytes / size <= args.max_compression:
                    continue
                start = time.perf_counter()
                layer = SubEmbedding.from_pretrained(
                    table, num_tables=num_tables, rows_per_table=rows_per_table,
                    assignment=assignment, reserved_ids=reserved, seed=args.seed,
                    token_weights=weights[weighting], row_scales=row_scales)
                seconds = time.perf_counter() - start
                rebuilt = np.asarray(keras.ops.convert_to_numpy(layer.embedding_table()))
                embedding.embeddings.assign(rebuilt)
                row = {
                    "assignment": assignment, "weights": weighting, "row_scales": row_scales,
                    "num_tables": num_tables,
                    "rows_per_table": rows_per_table, "packed": layer.pack_codes,
                    "stored_bytes": layer.compression_report().stored_bytes,
                    "compression": round(dense_bytes / layer.compression_report().stored_bytes, 1),
                    "shared_code_tokens": layer.compression_report().shared_code_tokens,
                    "token_cosine": round(reconstruction_quality(table, rebuilt)["mean_cosine"], 4),
                    **{f"cosine_{name}": round(float(evaluation.mean_cosine(
                        tokenized.embed(run), reference[name])), 4)
                       for name, tokenized in sets.items()},
                    "assign_seconds": round(seconds, 1),
                }
                embedding.embeddings.assign(table)
                rows.append(row)
                print(json.dumps(row), flush=True)

    front = set(evaluation.pareto_front([(r["stored_bytes"], r["cosine_out_of_domain"]) for r in rows]))
    for index, row in enumerate(rows):
        row["pareto"] = index in front
    (output / "codes.json").write_text(json.dumps(
        {"rows": rows, "arguments": vars(args), "load_average": os.getloadavg()}, indent=2))
    print_table(rows)
    plot(rows, output / "codes_pareto.png")
    print(f"\nWrote {output}/codes.json and codes_pareto.png")


def print_table(rows):
    print("\n| assignment | weights | row scales | K | M | packed | bytes | x | token cos | cos in "
          "| cos out | shared ids | Pareto |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in sorted(rows, key=lambda r: r["stored_bytes"]):
        print(f"| {row['assignment']} | {row['weights']} | {'yes' if row['row_scales'] else ''} | "
              f"{row['num_tables']} | "
              f"{row['rows_per_table']} | "
              f"{'yes' if row['packed'] else ''} | {row['stored_bytes']:,} | {row['compression']:.0f} | "
              f"{row['token_cosine']:.3f} | {row['cosine_in_domain']:.3f} | "
              f"{row['cosine_out_of_domain']:.3f} | {row['shared_code_tokens']:,} | "
              f"{'**yes**' if row['pareto'] else ''} |")


def plot(rows, path):
    try:
        from matplotlib.figure import Figure
    except ImportError:
        print("matplotlib is not installed: no plot", file=sys.stderr)
        return
    figure = Figure(figsize=(8, 5.5))
    axis = figure.subplots()
    for assignment, weighting, scaled in itertools.product(ASSIGNMENTS, WEIGHTS, (False, True)):
        mine = [r for r in rows
                if (r["assignment"], r["weights"], r["row_scales"]) == (assignment, weighting, scaled)]
        if mine:
            axis.scatter([r["compression"] for r in mine], [r["cosine_out_of_domain"] for r in mine],
                         color=COLORS[assignment], marker=MARKERS[weighting], s=26 if scaled else 22,
                         zorder=2, facecolors="none" if scaled else COLORS[assignment],
                         label=f"{assignment}, weights: {weighting}"
                               + (", row scales" if scaled else ""))
    front = sorted((r for r in rows if r["pareto"]), key=lambda r: r["compression"])
    axis.plot([r["compression"] for r in front], [r["cosine_out_of_domain"] for r in front],
              color="black", alpha=0.5, zorder=1, label="Pareto front")
    for r in front:
        axis.annotate(f"K={r['num_tables']} M={r['rows_per_table']} {r['weights']}"
                      + (" +scales" if r["row_scales"] else ""),
                      (r["compression"], r["cosine_out_of_domain"]),
                      textcoords="offset points", xytext=(4, 4), fontsize=7)
    axis.set_xscale("log")
    axis.set_xlabel("compression of the token table (dense bytes / stored bytes, codes included)")
    axis.set_ylabel("out-of-domain sentence cosine to the teacher (no training)")
    axis.set_title("all-MiniLM-L6-v2 token table: codes before distillation")
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120, format="png")


if __name__ == "__main__":
    main()
