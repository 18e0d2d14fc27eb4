"""int4 rounding algorithms of ai-edge-quantizer on a distilled MiniLM student: size, cosine, latency.

`ai-edge-quantizer` 0.10 rounds weights with more than min-max
(`algorithm_key`): MSE- and OCTAV-chosen clipping, GPTQ (calibrated on
sentences), a decomposed Hadamard rotation, OSCAR, and dequantized-weight
recovery (for weights already on an int4 grid). This script applies each one,
int4 channelwise with dynamic activations (the shipped recipe,
`int4_dynamic`), to the `FULLY_CONNECTED` weights of the transformer layers
of a float32 `.tflite` written by the main job, and measures on
out-of-domain sentences (movie reviews, never trained on) the mean cosine of
each file's sentence vectors to the float file's, the file size, and the
latency interleaved with the teacher's dynamic-range file
(benchmarks/bench_tflite_latency.py: batch 1, 128 tokens, 1 thread).
An algorithm that fails or that the kernels cannot run is listed with its error.
Beside them, `--recipes` rows are this package's own export of the preset
(`export(..., format="tflite", quantization=recipe)`): for `int4_dynamic`, kernels on
the MSE-clipped grid (stored exactly by the quantizer's min-max) and int8
lookup tables; `--granularities` adds min-max rows per block of inputs.

    python examples/compress_minilm.py                 # writes minilm_results/
    python benchmarks/bench_int4_algorithms.py minilm_results/product-k32m256.float32.tflite \\
        --preset minilm_results/product-k32m256 --teacher-file minilm_results/teacher.dynamic.tflite
"""

import argparse
import contextlib
import io
import json
import os
import pathlib
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras_hub  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import bench_tflite_latency  # noqa: E402

import keras_subembed  # noqa: E402,F401  (registers the compressed classes)
from keras_subembed import datasets  # noqa: E402
from keras_subembed.export import export  # noqa: E402
from keras_subembed.quantization import TRANSFORMER_SCOPE  # noqa: E402

ALGORITHMS = ("min_max_uniform_quantize", "MSE", "OCTAV", "GPTQ", "DECOMPOSED_HADAMARD_ROTATION",
              "OSCAR", "dequantized_weight_recovery")
GRANULARITIES = ("BLOCKWISE_32", "BLOCKWISE_64", "BLOCKWISE_128")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("float_file", type=pathlib.Path, help="a float32 .tflite sentence embedder")
    parser.add_argument("--preset", type=pathlib.Path, required=True,
                        help="its keras-hub preset folder (for the tokenizer)")
    parser.add_argument("--teacher-file", type=pathlib.Path, required=True,
                        help="the teacher's dynamic-range .tflite (latency reference)")
    parser.add_argument("--output", type=pathlib.Path, default=pathlib.Path("int4_algorithms"))
    parser.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS), choices=ALGORITHMS)
    parser.add_argument("--recipes", nargs="*", default=["int4_dynamic"],
                        help="this package's recipes, exported from --preset")
    parser.add_argument("--granularities", nargs="*", default=[], choices=GRANULARITIES,
                        help="min-max int4 rows with one scale per block of inputs")
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--calibration-sentences", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=5)
    return parser.parse_args(argv)


def single_inputs(preprocessor, texts):
    """One `{token_ids, padding_mask}` batch of 1 per text, trimmed to its length."""
    features = preprocessor(texts)
    ids = np.asarray(features["token_ids"], "int32")
    masks = np.asarray(features["padding_mask"], "int32")
    return [{"token_ids": ids[i:i + 1, :n], "padding_mask": masks[i:i + 1, :n]}
            for i, n in enumerate(masks.sum(axis=1))]


def sample(texts, count, seed):
    count = min(count, len(texts))
    return [texts[i] for i in sorted(np.random.default_rng(seed).choice(len(texts), count, replace=False))]


def quantized(flatbuffer, algorithm, calibration, granularity="CHANNELWISE"):
    from ai_edge_quantizer import qtyping
    from ai_edge_quantizer import quantizer
    from ai_edge_quantizer import recipe_manager

    manager = recipe_manager.RecipeManager()
    manager.add_dynamic_config(
        regex=TRANSFORMER_SCOPE, operation_name=qtyping.TFLOperationName.FULLY_CONNECTED,
        num_bits=4, granularity=qtyping.QuantGranularity[granularity], algorithm_key=algorithm)
    engine = quantizer.Quantizer(bytearray(flatbuffer), manager.get_quantization_recipe())
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        result = None
        if engine.need_calibration:
            result = engine.calibrate({"serving_default": calibration}, num_threads=2)
        return bytes(engine.quantize(result, enable_progress_bar=False,
                                     enable_progress_report=False).quantized_model)


def embed(flatbuffer, inputs):
    from ai_edge_litert.interpreter import Interpreter

    runner = Interpreter(model_content=flatbuffer, num_threads=2).get_signature_runner()
    return np.concatenate([runner(**x)["embedding"] for x in inputs])


def main(argv=None):
    args = parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)
    # The compressed embedder's preset loads once keras_subembed registered its classes.
    embedder = keras_hub.models.TextEmbedder.from_preset(str(args.preset))
    preprocessor = embedder.preprocessor
    evaluation = single_inputs(preprocessor, sample(
        datasets.sentences(datasets.movie_reviews(), min_words=4), args.sentences, 0))
    calibration = single_inputs(preprocessor, sample(
        datasets.sentences(datasets.wikipedia_articles(), min_words=4), args.calibration_sentences, 1))
    flatbuffer = args.float_file.read_bytes()
    want = embed(flatbuffer, evaluation)

    def file_path(algorithm):
        return args.output / f"{args.float_file.stem.split('.')[0]}.int4.{algorithm.replace(' ', '_')}.tflite"

    def package_file(recipe):
        path = file_path(f"keras_subembed {recipe}")
        export(embedder, path, format="tflite", quantization=recipe, overwrite=True)
        return path.read_bytes()

    variants = ([(name, lambda name=name: quantized(flatbuffer, name, calibration))
                 for name in args.algorithms]
                + [(f"min-max {g.lower()}", lambda g=g: quantized(
                    flatbuffer, "min_max_uniform_quantize", calibration, g))
                   for g in args.granularities]
                + [(f"keras_subembed {recipe}", lambda recipe=recipe: package_file(recipe))
                   for recipe in args.recipes])
    rows = []
    for algorithm, make in variants:
        start = time.perf_counter()
        row = {"algorithm": algorithm}
        try:
            content = make()
            got = embed(content, evaluation)
        except Exception as error:  # the table reports what each algorithm does here
            row["error"] = f"{type(error).__name__}: {str(error)[:200]}"
            rows.append(row)
            print(row, flush=True)
            continue
        path = file_path(algorithm)
        path.write_bytes(content)
        cosine = np.sum(got * want, -1) / np.linalg.norm(got, axis=-1) / np.linalg.norm(want, axis=-1)
        row.update(path=str(path), file_mb=round(len(content) / 1e6, 3),
                   cosine_to_float=round(float(np.mean(cosine)), 4),
                   cosine_to_float_p5=round(float(np.percentile(cosine, 5)), 4),
                   quantize_seconds=round(time.perf_counter() - start, 1))
        rows.append(row)
        print(row, flush=True)
    timed = [row for row in rows if "path" in row]
    if timed:
        latency_json = args.output / "latency.json"
        bench_tflite_latency.main([str(args.teacher_file)] + [row["path"] for row in timed]
                                  + ["--rounds", str(args.rounds), "--json", str(latency_json)])
        latency = {row["file"]: row for row in json.loads(latency_json.read_text())["rows"]}
        for row in timed:
            row.update(latency_ms=latency[row["path"]]["median_ms"],
                       latency_ratio_to_teacher_dynamic=latency[row["path"]]["ratio"])
    print("\n| algorithm | MB | cosine to float (mean, 5th pct.) | ms | x teacher dynamic |")
    print("|---|---|---|---|---|")
    for row in rows:
        if "error" in row:
            print(f"| {row['algorithm']} | - | {row['error']} | - | - |")
        else:
            print(f"| {row['algorithm']} | {row['file_mb']} | {row['cosine_to_float']:.4f}, "
                  f"{row['cosine_to_float_p5']:.4f} | {row['latency_ms']:.1f} | "
                  f"{row['latency_ratio_to_teacher_dynamic']:.2f} |")
    (args.output / "results.json").write_text(json.dumps(
        {"rows": rows, "arguments": vars(args), "load_average": os.getloadavg()}, indent=2,
        default=str))


if __name__ == "__main__":
    main()
