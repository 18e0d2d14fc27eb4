"""LiteRT latency of several .tflite files, measured interleaved in one process.

A shared machine drifts; timing file A for a minute and then file B confounds
the files with the drift. Here every round runs each file in turn (`--runs`
calls each; odd rounds in reverse order), and the figure is the median over
rounds of each round's median (and of its fastest call, the steadier figure
on a loaded machine), with the ratio to the first file taken round by round.

    python benchmarks/bench_tflite_latency.py minilm_results/teacher.dynamic.tflite \\
        minilm_results/product-k32m256.dynamic.tflite [--tokens 128] [--rounds 15]

Inputs: batch 1, `--tokens` tokens (ids 1000..), a full padding mask, 1 thread.
"""

import argparse
import json
import os
import pathlib
import time

import numpy as np
from ai_edge_litert.interpreter import Interpreter


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=pathlib.Path)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--runs", type=int, default=20, help="calls per file per round")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", type=pathlib.Path, help="write the figures here too")
    return parser.parse_args(argv)


def runner(path, tokens, threads):
    interpreter = Interpreter(model_path=str(path), num_threads=threads)
    signature = interpreter.get_signature_runner("serving_default")
    ids = (1000 + np.arange(tokens, dtype="int32")).reshape(1, tokens)
    inputs = {"token_ids": ids, "padding_mask": np.ones_like(ids)}
    names = interpreter.get_signature_list()["serving_default"]["inputs"]
    inputs = {name: value for name, value in inputs.items() if name in names}
    if "segment_ids" in names:
        inputs["segment_ids"] = np.zeros_like(ids)
    signature(**inputs)  # warm-up
    return lambda: signature(**inputs)


def main(argv=None):
    args = parse_args(argv)
    calls = [runner(path, args.tokens, args.threads) for path in args.files]
    per_round = np.zeros((args.rounds, len(calls)))
    fastest = np.zeros((args.rounds, len(calls)))
    for round_index in range(args.rounds):
        # Odd rounds run the files in reverse: no file always follows another.
        order = range(len(calls)) if round_index % 2 == 0 else reversed(range(len(calls)))
        for file_index in order:
            times = []
            for _ in range(args.runs):
                start = time.perf_counter()
                calls[file_index]()
                times.append(time.perf_counter() - start)
            per_round[round_index, file_index] = np.median(times) * 1000
            fastest[round_index, file_index] = np.min(times) * 1000
    # On a loaded machine the fastest call of a round is the one least
    # delayed by other processes: its ratio is the steadier figure.
    ratios = per_round / per_round[:, :1]
    fastest_ratios = fastest / fastest[:, :1]
    rows = []
    print(f"| file | MB | median ms | ratio to {args.files[0].name} (median of rounds) "
          "| fastest ms | ratio of fastest |")
    print("|---|---|---|---|---|---|")
    for index, path in enumerate(args.files):
        row = {"file": str(path), "mb": round(path.stat().st_size / 1e6, 3),
               "median_ms": round(float(np.median(per_round[:, index])), 3),
               "ratio": round(float(np.median(ratios[:, index])), 3),
               "fastest_ms": round(float(np.median(fastest[:, index])), 3),
               "fastest_ratio": round(float(np.median(fastest_ratios[:, index])), 3)}
        rows.append(row)
        print(f"| {path.name} | {row['mb']} | {row['median_ms']} | {row['ratio']} "
              f"| {row['fastest_ms']} | {row['fastest_ratio']} |")
    print(f"load average {os.getloadavg()}; {args.rounds} rounds x {args.runs} calls, "
          f"batch 1 x {args.tokens} tokens, {args.threads} thread(s)")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "arguments": vars(args)}, indent=2,
                                        default=str))


if __name__ == "__main__":
    main()
