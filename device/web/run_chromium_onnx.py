"""Run an .onnx file in ONNX Runtime Web in headless Chromium and compare it with ONNX Runtime's Python API.

Serves `device/web/` (the page `onnx.html`, `onnx_embed.mjs`, onnxruntime-web's
wasm files from node_modules) and the model from 127.0.0.1, opens the page in
headless Chromium through puppeteer-core (`drive.mjs`), runs each token-id
sequence there (batch 1, single-threaded wasm: the page is not
cross-origin isolated), and runs the same sequences with `onnxruntime` in
Python on the same file. Prints the cosine per sequence; exits 1 when their
mean is below --min-cosine. No tokenizer runs in the page: the ids come from
the model's own tokenizer in Python (`--ids`, a JSON list of id lists, e.g.
`[list(ids[mask]) for ids, mask in zip(features["token_ids"], features["padding_mask"])]`
of `embedder.preprocessor(texts)`), or are made up from the vocabulary size
the export recorded. Every input named `*mask` gets ones, any other input
than `token_ids` zeros. Nothing is downloaded: run `npm ci` in device/web
once and install Chromium (`apt-get update && apt-get install -y chromium`).

    python device/web/run_chromium_onnx.py e5.int4.onnx --ids ids.json --runs 20 --json web.json
"""

import json
import os
import pathlib
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from run_chromium import browser_vectors  # noqa: E402
from run_chromium import cosines  # noqa: E402
from run_chromium import page_arguments  # noqa: E402

MODEL_ROUTE = "/model.onnx"
METADATA_NAME = "keras_subembed"  # the export's metadata entry (keras_subembed.tflite_metadata)
MADE_UP_LENGTHS = (3, 8, 16)  # within any max_sequence_length a model has in practice


def session_of(model_path):
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])


def made_up_ids(session, lengths=MADE_UP_LENGTHS, seed=0):
    """Random ids below the vocabulary size the export recorded, first and last 0 and 2."""
    metadata = session.get_modelmeta().custom_metadata_map.get(METADATA_NAME)
    vocabulary_size = json.loads(metadata).get("vocabulary_size") if metadata else None
    if not vocabulary_size:
        raise SystemExit("error: the file records no vocabulary size (not from export_onnx?): pass --ids")
    rng = np.random.default_rng(seed)
    return [[0] + rng.integers(5, vocabulary_size, length - 2).tolist() + [2] for length in lengths]


def page_inputs(session, id_lists):
    """One `{input name: {dtype, dims, data}}` per id list, in the file's own integer dtypes."""
    samples = []
    for ids in id_lists:
        sample = {}
        for spec in session.get_inputs():
            dtype = spec.type.removeprefix("tensor(").removesuffix(")")
            if dtype not in ("int32", "int64"):
                raise SystemExit(f"error: input {spec.name!r} is {spec.type}; the page feeds int32 or int64")
            fill = 1 if spec.name.endswith("mask") else 0
            data = [int(i) for i in ids] if spec.name == "token_ids" else [fill] * len(ids)
            sample[spec.name] = {"dtype": dtype, "dims": [1, len(ids)], "data": data}
        samples.append(sample)
    return samples


def python_vectors(session, samples, runs):
    """(vectors of the first output, median ms of the longest sample) with ONNX Runtime in Python."""
    output = session.get_outputs()[0].name

    def run(sample):
        feeds = {name: np.asarray(value["data"], value["dtype"]).reshape(value["dims"])
                 for name, value in sample.items()}
        return session.run([output], feeds)[0]

    results = [run(sample) for sample in samples]
    vectors = np.concatenate([r.reshape(-1, r.shape[-1]) for r in results])
    longest, times = max(samples, key=lambda s: len(s["token_ids"]["data"])), []
    for _ in range(runs):
        start = time.perf_counter()
        run(longest)
        times.append((time.perf_counter() - start) * 1000)
    return vectors, (statistics.median(times) if times else None)


parse_arguments = page_arguments(
    __doc__.splitlines()[0], "an .onnx file (export_onnx) taking token_ids and masks",
    ("--ids", "a JSON list of token-id lists (default: made-up ids)"), "onnxruntime-web")


def main(argv=None):
    args = parse_arguments(argv)
    model = pathlib.Path(args.model).resolve()
    session = session_of(model)
    id_lists = (json.loads(pathlib.Path(args.ids).read_text(encoding="utf-8")) if args.ids
                else made_up_ids(session))
    samples = page_inputs(session, id_lists)
    web = browser_vectors(model, samples, args.chromium, args.runs, page="onnx.html",
                          module="./onnx_embed.mjs", model_route=MODEL_ROUTE)
    python, python_ms = python_vectors(session, samples, args.runs)
    if np.shape(web["vectors"]) != python.shape:
        print(f"error: the page gives vectors of shape {np.shape(web['vectors'])}, Python "
              f"{python.shape}; page log: {web['logs'][-5:]}", file=sys.stderr)
        return 1
    scores = cosines(web["vectors"], python)
    for ids, score in zip(id_lists, scores):
        print(f"{score:.6f}  {len(ids)} ids")
    figures = {
        "model": str(model), "sequences": len(id_lists), "mean_cosine": float(scores.mean()),
        "min_cosine": float(scores.min()),
        "max_abs_difference": float(np.max(np.abs(np.asarray(web["vectors"]) - python))),
        "browser": web["userAgent"], "browser_load_ms": web["loadMs"],
        "load_average": os.getloadavg(), "browser_median_run_ms": web["medianEmbedMs"],
        "python_median_run_ms": python_ms, "runs": args.runs,
    }
    print(json.dumps(figures, indent=2))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    if not scores.mean() >= args.min_cosine:
        print(f"error: the mean cosine {scores.mean():.6f} is below --min-cosine {args.min_cosine}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
