"""The .tflite files that split the int4 student's latency against the teacher's.

Four files of all-MiniLM-L6-v2 (no training: weights change no op's cost):

* `teacher.dynamic.tflite`: the teacher's dynamic-range file (the reference);
* `teacher.int4_dynamic.tflite`: the teacher with the int4 recipe (int4
  transformer kernels, its one token table in int8): the int4 kernels alone;
* `product-k32m256.dynamic.tflite`, `product-k32m256.int4_dynamic.tflite`:
  the main job's 34x student (32 sub-tables of 256 rows, row scales), so the
  ratio of each student to the teacher file of the same recipe is its
  embedding's own cost (the code lookup, 32 sub-table gathers, the scales).

Time them interleaved with `benchmarks/bench_tflite_latency.py`:

    python benchmarks/build_latency_files.py --output /tmp/latency_files
    python benchmarks/bench_tflite_latency.py /tmp/latency_files/teacher.dynamic.tflite \\
        /tmp/latency_files/teacher.int4_dynamic.tflite \\
        /tmp/latency_files/product-k32m256.dynamic.tflite \\
        /tmp/latency_files/product-k32m256.int4_dynamic.tflite --rounds 9
"""

import argparse
import pathlib
import time

import keras_hub

import keras_subembed
from keras_subembed import datasets
from keras_subembed.export import export
from keras_subembed.models import match_model_files

STUDENT = {"assignment": "product", "num_tables": 32, "rows_per_table": 256,
           "row_scales": True, "reserved_ids": [0, 100, 101, 102, 103]}
RECIPES = ("dynamic", "int4_dynamic")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=pathlib.Path, required=True)
    parser.add_argument("--sequence-length", type=int, default=128)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)
    preset = datasets.minilm_preset_dir()
    teacher = match_model_files(keras_hub.models.TextEmbedder.from_preset(str(preset)), preset)
    teacher.preprocessor.sequence_length = args.sequence_length
    start = time.perf_counter()
    student = keras_subembed.compress(teacher, "sub", STUDENT)
    print(f"student built in {time.perf_counter() - start:.0f} s", flush=True)
    for name, model in (("teacher", teacher), ("product-k32m256", student)):
        for recipe in RECIPES:
            path = args.output / f"{name}.{recipe}.tflite"
            if path.exists():
                continue
            start = time.perf_counter()
            report = export(model, path, format="tflite", quantization=recipe,
                                   sequence_lengths=(16, args.sequence_length))
            print(f"{path.name}: {report.file_bytes / 1e6:.2f} MB, max error "
                  f"{report.max_abs_error:.2g}, {time.perf_counter() - start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
