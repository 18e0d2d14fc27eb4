"""Run the web page's MediaPipe TextEmbedder in headless Chromium and compare it with Python's MediaPipe.

Serves `device/web/` (the page, `embed.mjs`, the npm package's wasm files) and
the model from 127.0.0.1, opens the page in headless Chromium through
puppeteer-core (`drive.mjs`), embeds each text there from the raw string, and
embeds the same texts with Python's `mediapipe.tasks.python.text.TextEmbedder`
on the same file. Prints the cosine per text; exits 1 when their mean is
below --min-cosine (dynamic-range files differ a little between the wasm and
native int8 kernels, so single texts may fall lower). Nothing is downloaded: run `npm ci` in device/web once, and
install Chromium (`apt-get update && apt-get install -y chromium`). The
page may ask for nothing beyond 127.0.0.1 (drive.mjs refuses it, and this
script then fails). `run_chromium_onnx.py` does the same for an `.onnx` file
in ONNX Runtime Web.

    python device/web/run_chromium.py minilm_mediapipe.tflite
    python device/web/run_chromium.py e5_mediapipe.tflite --texts texts.txt --runs 20 --json web.json
"""

import argparse
import functools
import os
import http.server
import json
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

WEB = pathlib.Path(__file__).resolve().parent
MODEL_ROUTE = "/model.tflite"
# One sentence per script; capitals where the script has them.
DEFAULT_TEXTS = [
    "The police closed the road after the storm.", "Die Straße in Berlin ist heute gesperrt.",
    "Le café de Paris est très bon.", "Москва — столица России.", "Η Αθήνα είναι η πρωτεύουσα της Ελλάδας.",
    "القاهرة هي عاصمة مصر.", "ירושלים היא עיר עתיקה.", "दिल्ली भारत की राजधानी है।",
    "ঢাকা বাংলাদেশের রাজধানী।", "กรุงเทพเป็นเมืองหลวงของประเทศไทย", "東京は日本の首都です。",
    "서울은 한국의 수도입니다.", "emoji 😀 and numbers 3.14, 1,000",
]


class Handler(http.server.SimpleHTTPRequestHandler):
    """device/web/ as files, the model at its route; ES modules and wasm with their MIME types."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".mjs": "text/javascript", ".js": "text/javascript", ".wasm": "application/wasm"}

    def __init__(self, *args, model_path, model_route, **kwargs):
        self.model_path, self.model_route = model_path, model_route
        super().__init__(*args, directory=str(WEB), **kwargs)

    def translate_path(self, path):
        if path.split("?")[0] == self.model_route:
            return str(self.model_path)
        return super().translate_path(path)

    def log_message(self, *unused):
        pass


def serve(model_path, model_route=MODEL_ROUTE):
    """A server on 127.0.0.1 (a free port) in a daemon thread."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, model_path=model_path, model_route=model_route))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def browser_vectors(model_path, inputs, chromium, runs, page="index.html", module="./embed.mjs",
                    model_route=MODEL_ROUTE):
    """{vectors, loadMs, medianEmbedMs, userAgent, logs} from `page` in headless Chromium,
    embedding `inputs` (texts for MediaPipe's page) with its `module` (see drive.mjs)."""
    server = serve(model_path, model_route)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            inputs_file = pathlib.Path(tmp) / "inputs.json"
            inputs_file.write_text(json.dumps(inputs), encoding="utf-8")
            url = f"http://127.0.0.1:{server.server_address[1]}/{page}"
            result = subprocess.run(
                ["node", str(WEB / "drive.mjs"), url, module, model_route, str(inputs_file),
                 chromium, str(runs)],
                capture_output=True, text=True, cwd=WEB, timeout=600)
    finally:
        server.shutdown()
    if result.returncode != 0:
        raise SystemExit(f"error: the page failed:\n{result.stderr.strip()}")
    figures = json.loads(result.stdout)
    if figures["offLoopback"]:
        raise SystemExit(f"error: the page asked for files beyond 127.0.0.1 (refused): "
                         f"{figures['offLoopback'][:5]}")
    return figures


def python_vectors(model_path, texts, runs):
    """(vectors, median ms of embed on the longest text) with Python's MediaPipe, raw vectors."""
    from mediapipe.tasks.python.core.base_options import BaseOptions
    from mediapipe.tasks.python.text import text_embedder

    options = text_embedder.TextEmbedderOptions(
        base_options=BaseOptions(model_asset_path=str(model_path)), l2_normalize=False, quantize=False)
    with text_embedder.TextEmbedder.create_from_options(options) as task:
        vectors = np.stack([task.embed(text).embeddings[0].embedding for text in texts])
        longest, times = max(texts, key=len), []
        for _ in range(runs):
            start = time.perf_counter()
            task.embed(longest)
            times.append((time.perf_counter() - start) * 1000)
    return vectors, (statistics.median(times) if times else None)


def cosines(a, b):
    a, b = np.asarray(a, "float64"), np.asarray(b, "float64")
    return (a * b).sum(1) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-12)


def page_arguments(description, model_help, inputs, package):
    """The flags both pages' checks take: `inputs` is (flag, help) of what is embedded;
    `package` the npm package under node_modules/ that the page needs."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("model", help=model_help)
    parser.add_argument(inputs[0], help=inputs[1])
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    parser.add_argument("--runs", type=int, default=0, help="time this many runs in each runtime")
    parser.add_argument("--min-cosine", type=float, default=0.999, help="the lowest mean cosine accepted")
    parser.add_argument("--json", help="write the figures here")

    def parse(argv):
        args = parser.parse_args(argv)
        if not pathlib.Path(args.model).is_file():
            parser.error(f"no model file at {args.model}")
        if not (WEB / "node_modules" / package).is_dir():
            parser.error(f"run `npm ci` in {WEB} first (it installs {package} and puppeteer-core)")
        if not pathlib.Path(args.chromium).is_file():
            parser.error(f"no Chromium at {args.chromium} "
                         "(apt-get update && apt-get install -y chromium, or pass --chromium)")
        return args

    return parse


parse_arguments = page_arguments(
    __doc__.splitlines()[0], "a MediaPipe TextEmbedder .tflite file (export_mediapipe)",
    ("--texts", "a UTF-8 file, one text a line (default: one sentence per script)"),
    "@mediapipe/tasks-text")


def main(argv=None):
    args = parse_arguments(argv)
    texts = DEFAULT_TEXTS
    if args.texts:
        texts = [line for line in pathlib.Path(args.texts).read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    model = pathlib.Path(args.model).resolve()
    web = browser_vectors(model, texts, args.chromium, args.runs)
    python, python_ms = python_vectors(model, texts, args.runs)
    scores = cosines(web["vectors"], python)
    for text, score in zip(texts, scores):
        print(f"{score:.6f}  {text[:60]}")
    figures = {
        "model": str(model), "texts": len(texts), "mean_cosine": float(scores.mean()),
        "min_cosine": float(scores.min()), "browser": web["userAgent"],
        "browser_load_ms": web["loadMs"], "load_average": os.getloadavg(), "browser_median_embed_ms": web["medianEmbedMs"],
        "python_median_embed_ms": python_ms, "runs": args.runs,
    }
    print(json.dumps(figures, indent=2))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    if scores.mean() < args.min_cosine:
        print(f"error: the mean cosine {scores.mean():.6f} is below --min-cosine {args.min_cosine}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
