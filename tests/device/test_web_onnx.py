"""device/web/'s ONNX page: an int4 `.onnx` file runs in ONNX Runtime Web in headless Chromium
and gives ONNX Runtime Python's vectors (device/web/run_chromium_onnx.py, end to end)."""

import importlib.util
import json
import pathlib
import shutil
import sys

import numpy as np
import pytest

import keras_subembed
from keras_subembed.export import export_onnx

ROOT = pathlib.Path(__file__).parents[2]
WEB = ROOT / "device" / "web"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
MISSING = [what for what, absent in [
    ("Chromium (apt-get update && apt-get install -y chromium)", CHROMIUM is None),
    ("node (apt-get install -y nodejs npm)", shutil.which("node") is None),
    ("device/web/node_modules (npm ci in device/web)", not (WEB / "node_modules" / "onnxruntime-web").is_dir()),
    ("onnx, onnxruntime, tf2onnx", any(importlib.util.find_spec(name) is None
                                       for name in ("onnx", "onnxruntime", "tf2onnx"))),
] if absent]

sys.path.insert(0, str(ROOT / "tests" / "models" / "families"))
from test_compressed_text_embedder import SUB  # noqa: E402
from test_compressed_text_embedder import TEXTS  # noqa: E402
from test_compressed_text_embedder import make_bert_embedder  # noqa: E402


def run_chromium_onnx():
    spec = importlib.util.spec_from_file_location("run_chromium_onnx", WEB / "run_chromium_onnx.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.tensorflow_only(reason="the file is exported by TensorFlow (tf2onnx)")
@pytest.mark.skipif(bool(MISSING), reason=f"not installed: {MISSING}")
def test_an_int4_onnx_file_gives_onnx_runtime_python_vectors_in_chromium(tmp_path, capsys):
    embedder = keras_subembed.compress(make_bert_embedder("mean"), "sub", SUB)
    path = tmp_path / "small.int4.onnx"
    export_onnx(embedder, path, quantization="int4")
    # The model's own tokenizer, in Python; the page takes the ids, unpadded.
    features = embedder.preprocessor(TEXTS)
    ids = [np.asarray(row)[np.asarray(mask, bool)].tolist()
           for row, mask in zip(features["token_ids"], features["padding_mask"])]
    (tmp_path / "ids.json").write_text(json.dumps(ids))
    figures = tmp_path / "web.json"
    status = run_chromium_onnx().main([str(path), "--ids", str(tmp_path / "ids.json"),
                                       "--chromium", CHROMIUM, "--json", str(figures)])
    assert status == 0, capsys.readouterr()
    figures = json.loads(figures.read_text())
    # The wasm MatMulNBits kernel dequantizes as the native one: equal to float rounding.
    assert figures["sequences"] == len(TEXTS) and figures["min_cosine"] > 0.9999
    assert figures["max_abs_difference"] < 1e-4
    # Held to --min-cosine: no file meets an impossible one.
    assert run_chromium_onnx().main([str(path), "--ids", str(tmp_path / "ids.json"),
                                     "--chromium", CHROMIUM, "--min-cosine", "1.01"]) == 1
