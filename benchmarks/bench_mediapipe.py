"""all-MiniLM-L6-v2 in MediaPipe Tasks' TextEmbedder: parity with Keras from raw strings.

Exports the model (the teacher, or with `--compress` a `keras_subembed.compress`
student with product codes K=32 M=256 and no distillation, or any preset
folder with `--preset`) with `export(..., format="mediapipe")`, float32 and dynamic-range,
then embeds held-out sentences (Lee news articles held out by document, movie
reviews, newsgroup posts; never trained on) with MediaPipe's own tokenizer
from raw strings and compares with the Keras model's vectors. Accented
sentences from the same data are measured apart, as given and with the
accents stripped by the app before `embed` (what the warning advises).
MediaPipe's token ids are compared with the model's tokenizer's too.

    python benchmarks/bench_mediapipe.py [--compress] [--preset DIR] [--json out.json]
"""

import argparse
import json
import os
import pathlib
import platform
import sys
import tempfile
import time
import unicodedata

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", help="a keras-hub preset folder (default: all-MiniLM-L6-v2)")
    parser.add_argument("--compress", action="store_true",
                        help="compress the model's token table (product K=32 M=256), no distillation")
    parser.add_argument("--sentences", type=int, default=300)
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--output", help="folder for the .tflite files (default: a temporary one)")
    parser.add_argument("--json", help="write the results here")
    return parser.parse_args(argv)


def strip_accents(text):
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")


def held_out_sentences(count, seed=0):
    """Sentences distillation and compression never saw; (plain, accented)."""
    from keras_subembed import datasets
    from keras_subembed import evaluation

    _, lee_held_out = datasets.split_by_document(datasets.lee_documents(), 0.2, seed=seed)
    posts, topics, _ = datasets.newsgroup_posts()
    _, _, test_posts, _ = evaluation.stratified_split(posts, topics, test_fraction=0.3, seed=seed)
    pool = (datasets.sentences(lee_held_out, min_words=4)
            + datasets.sentences(datasets.movie_reviews(), min_words=4)
            + datasets.sentences(test_posts, min_words=4))
    polarity, _ = datasets.polarity_sentences()
    everything = pool + polarity + datasets.sentences(datasets.novel_paragraphs(), min_words=4)
    accented = sorted({t for t in everything if strip_accents(t) != t})
    plain = [t for t in pool if strip_accents(t) == t]
    rng = np.random.default_rng(seed)
    plain = [plain[i] for i in sorted(rng.choice(len(plain), min(count, len(plain)), replace=False))]
    return plain, accented


def load_model(args):
    import keras_hub

    import keras_subembed
    from keras_subembed.datasets import minilm_preset_dir
    from keras_subembed.models import match_model_files

    preset = args.preset or str(minilm_preset_dir())
    model = keras_hub.models.TextEmbedder.from_preset(preset)
    if args.preset is None:
        model = match_model_files(model, preset)  # its tokenizer.json: strip accents
    model.preprocessor.sequence_length = args.sequence_length
    if args.compress:
        model = keras_subembed.compress(model, "sub", {
            "assignment": "product", "num_tables": 32, "rows_per_table": 256,
            "reserved_ids": [0, 100, 101, 102, 103]})
    return model


def cosines(a, b):
    """Cosine of each row of `a` to the same row of `b`."""
    return np.einsum("ij,ij->i", a, b) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def litert_vectors(path, model, texts, sequence_length):
    """The file's vectors in LiteRT from the model's own tokenizer, and the median
    ms of one call (batch 1, 1 thread, model only)."""
    from ai_edge_litert.interpreter import Interpreter

    preprocessor = model.preprocessor
    preprocessor.sequence_length = sequence_length
    features = {k: np.asarray(v, "int32") for k, v in preprocessor(texts).items()}
    runner = Interpreter(model_path=str(path), num_threads=1).get_signature_runner("serving_default")
    vectors, times = [], []
    for row in range(len(texts)):
        start = time.perf_counter()
        out = runner(ids=features["token_ids"][row:row + 1], mask=features["padding_mask"][row:row + 1],
                     segment_ids=features["segment_ids"][row:row + 1])
        times.append((time.perf_counter() - start) * 1000)
        vectors.append(out["embedding"][0])
    return np.stack(vectors), float(np.median(times[1:]))


def main(argv=None):
    args = parse_args(argv)
    import warnings

    from keras_subembed.export import export
    from keras_subembed.export import mediapipe_token_ids
    from keras_subembed.export import MediaPipeEmbedder
    from keras_subembed.models import encode_by_length

    plain, accented = held_out_sentences(args.sentences)
    print(f"{len(plain)} held-out sentences without accents, {len(accented)} with", flush=True)
    model = load_model(args)
    tokenizer = model.preprocessor.tokenizer
    # The preprocessor packs `--sequence-length` tokens, as the files are fed.
    want = {"plain": encode_by_length(model, plain), "accented": encode_by_length(model, accented)}
    # MediaPipe's ids against the model's own tokenizer (with [CLS] ... [SEP], truncated).
    keep = args.sequence_length - 2
    results = {"machine": f"{platform.machine()} {os.cpu_count()} cores, {platform.python_version()}",
               "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "model": args.preset or "all-MiniLM-L6-v2" + (" compressed K=32 M=256, not distilled"
                                                           if args.compress else " (teacher)"),
               "sentences": len(plain), "accented_sentences": len(accented), "files": {}}
    for name, texts in (("plain", plain), ("accented", accented)):
        got = mediapipe_token_ids(tokenizer.vocabulary, texts, args.sequence_length)
        ids = [[tokenizer.token_to_id("[CLS]"), *np.asarray(tokenizer(t)).tolist()[:keep],
                tokenizer.token_to_id("[SEP]")] for t in texts]
        results[f"same_ids_{name}"] = float(np.mean([g == w for g, w in zip(got, ids)]))
        print(f"MediaPipe ids equal the model's: {results[f'same_ids_{name}']:.3f} of {name}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(args.output or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for quantization in (None, "dynamic", "float16"):
            path = folder / f"minilm.mediapipe.{quantization or 'float32'}.tflite"
            start = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                report = export(model, path, format="mediapipe", quantization=quantization, overwrite=True,
                                          texts=plain[:32], latency_runs=20)
            seconds = time.perf_counter() - start
            row = {"file_mb": round(report.file_bytes / 1e6, 3), "export_s": round(seconds, 1),
                   "latency_ms": round(report.latency_ms, 2),
                   "warned": [str(w.message)[:80] for w in caught if w.category is UserWarning]}
            with MediaPipeEmbedder(path.read_bytes()) as task:
                for name, texts in (("plain", plain), ("accented", accented)):
                    got = np.stack([task.embed(t) for t in texts])
                    c = cosines(got, want[name])
                    row[f"cosine_{name}_mean"] = round(float(np.mean(c)), 5)
                    row[f"cosine_{name}_min"] = round(float(np.min(c)), 5)
                    row[f"share_{name}_at_least_0.999"] = round(float(np.mean(c >= 0.999)), 4)
                got = np.stack([task.embed(strip_accents(t)) for t in accented])
                c = cosines(got, want["accented"])
                row["cosine_accented_app_stripped_mean"] = round(float(np.mean(c)), 5)
                row["cosine_accented_app_stripped_min"] = round(float(np.min(c)), 5)
                mediapipe_plain = np.stack([task.embed(t) for t in plain])
            # The same file in LiteRT, fed the model's own tokenizer's ids: what is
            # left between the two is MediaPipe's tokenizer and runtime, not int8.
            litert, litert_ms = litert_vectors(path, model, plain, args.sequence_length)
            c = cosines(mediapipe_plain, litert)
            row["cosine_plain_to_litert_same_file_mean"] = round(float(np.mean(c)), 5)
            row["cosine_plain_to_litert_same_file_min"] = round(float(np.min(c)), 5)
            row["litert_latency_ms"] = round(litert_ms, 2)
            c = cosines(litert, want["plain"])
            row["litert_cosine_plain_to_keras_mean"] = round(float(np.mean(c)), 5)
            results["files"][quantization or "float32"] = row
            print(quantization or "float32", json.dumps(row), flush=True)
    print(json.dumps(results, indent=1))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
