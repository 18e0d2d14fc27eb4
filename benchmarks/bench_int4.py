"""ai-edge-quantizer recipes on a compressed MiniLM: file size, cosine to the float model, latency.

Takes a sentence encoder saved by examples/compress_minilm.py (`<setting>.keras`),
converts it to float32 .tflite once, applies every recipe of
`keras_subembed.quantization.RECIPES` (plus the converter's own
dynamic-range int8), and measures on out-of-domain sentences (movie reviews,
never trained on) the mean cosine of each file's sentence vectors to the float
Keras model's; latency is measured interleaved with the teacher's dynamic-range
file (benchmarks/bench_tflite_latency.py: batch 1, 128 tokens, 1 thread).

    python examples/compress_minilm.py --settings product-k32m256   # writes minilm_results/
    python benchmarks/bench_int4.py minilm_results/product-k32m256.keras \\
        --teacher-file minilm_results/teacher.dynamic.tflite [--sentences 200] [--rounds 7]
"""

import argparse
import json
import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import bench_tflite_latency  # noqa: E402

from keras_subembed import datasets  # noqa: E402
from keras_subembed.quantization.recipes import RECIPE_NAMES  # noqa: E402
from keras_subembed.export.quantizer_recipes import quantize_flatbuffer  # noqa: E402
from keras_subembed.export.tflite import convert  # noqa: E402
from keras_subembed.export.tflite import interpreter_runner  # noqa: E402


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=pathlib.Path, help="a saved sentence encoder (.keras)")
    parser.add_argument("--teacher-file", type=pathlib.Path, required=True,
                        help="the teacher's dynamic-range .tflite (latency reference)")
    parser.add_argument("--output", type=pathlib.Path, default=pathlib.Path("int4_results"))
    parser.add_argument("--recipes", nargs="+", default=list(RECIPE_NAMES), choices=RECIPE_NAMES)
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)
    encoder = keras.saving.load_model(args.model)
    texts = datasets.sentences(datasets.movie_reviews(), min_words=4)
    count = min(args.sentences, len(texts))
    texts = [texts[i] for i in sorted(np.random.default_rng(0).choice(len(texts), count, replace=False))]
    features = encoder.preprocessor(texts)
    ids = np.asarray(features["token_ids"], "int32")
    masks = np.asarray(features["padding_mask"], "int32")
    lengths = masks.sum(axis=1)
    inputs = [{"token_ids": ids[i:i + 1, :n], "padding_mask": masks[i:i + 1, :n]}
              for i, n in enumerate(lengths)]
    want = np.concatenate([np.asarray(encoder(x)["embedding"]) for x in inputs])

    flatbuffer = convert(encoder)
    files = {"float32": flatbuffer, "dynamic": convert(encoder, quantization="dynamic")}
    for recipe in args.recipes:
        files[recipe] = quantize_flatbuffer(flatbuffer, recipe)
    rows = []
    for name, content in files.items():
        path = args.output / f"{args.model.stem}.{name}.tflite"
        path.write_bytes(content)
        runner = interpreter_runner(content, num_threads=2)
        got = np.concatenate([runner(**x)["embedding"] for x in inputs])
        cosine = np.sum(got * want, -1) / np.linalg.norm(got, axis=-1) / np.linalg.norm(want, axis=-1)
        rows.append({"quantization": name, "path": str(path), "file_mb": round(len(content) / 1e6, 3),
                     "cosine_to_float": round(float(np.mean(cosine)), 4),
                     "cosine_to_float_p5": round(float(np.percentile(cosine, 5)), 4)})
        print(rows[-1], flush=True)
    latency_json = args.output / "latency.json"
    bench_tflite_latency.main([str(args.teacher_file)] + [row["path"] for row in rows]
                              + ["--rounds", str(args.rounds), "--json", str(latency_json)])
    latency = {row["file"]: row for row in json.loads(latency_json.read_text())["rows"]}
    print(f"\n| quantization | MB | cosine to float (mean, 5th pct.) | ms | x teacher dynamic |")
    print("|---|---|---|---|---|")
    for row in rows:
        timing = latency[row["path"]]
        row.update(latency_ms=timing["median_ms"], latency_ratio_to_teacher_dynamic=timing["ratio"])
        print(f"| {row['quantization']} | {row['file_mb']} | {row['cosine_to_float']:.4f}, "
              f"{row['cosine_to_float_p5']:.4f} | {row['latency_ms']:.1f} | {row['latency_ratio_to_teacher_dynamic']:.2f} |")
    (args.output / "results.json").write_text(json.dumps(
        {"rows": rows, "arguments": vars(args), "load_average": os.getloadavg()}, indent=2, default=str))


if __name__ == "__main__":
    main()
