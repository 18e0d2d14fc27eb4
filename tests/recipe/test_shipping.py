"""`ship`: one verified file per runtime, named by the recipe, its arguments checked before
any export; `file_runner` runs each kind of file. The exports are stood in for here."""

import re

import numpy as np
import pytest

from keras_subembed.recipe import shipping
from tests.tflite_utils import echo_tflite


@pytest.fixture
def exports(monkeypatch):
    calls = []

    def export(embedder, path, format, overwrite, **kwargs):
        calls.append((path.name, format, overwrite, kwargs))
        return f"{format} report"

    monkeypatch.setattr(shipping, "export", export)
    # What each export leaves is handed back before the next one starts.
    monkeypatch.setattr(shipping, "release_memory", lambda: calls.append("released"))
    return calls


def test_each_runtime_gets_its_file_at_the_recipes_quantization(exports, tmp_path):
    reports = shipping.ship("embedder", tmp_path, "student", recipe="int4_dynamic",
                            mediapipe_length=64, latency_runs=0)
    assert reports == {"tflite": "tflite report", "mediapipe": "mediapipe report",
                       "onnx": "onnx report"}
    assert exports == [
        ("student.int4_dynamic.tflite", "tflite", False,
         dict(quantization="int4_dynamic", latency_runs=0)), "released",
        ("student.mediapipe.tflite", "mediapipe", False,
         dict(quantization="int4_dynamic", sequence_length=64, latency_runs=0)), "released",
        ("student.onnx", "onnx", False, dict(quantization="int4")),  # ONNX Runtime's int4 blocks
        "released",
    ]


def test_formats_are_a_list_of_runtimes_each_once(exports, tmp_path):
    assert shipping.check_formats("onnx") == ("onnx",)
    assert shipping.check_formats(["onnx", "tflite", "onnx"]) == ("onnx", "tflite")
    shipping.ship("embedder", tmp_path, "student", formats=["onnx"], recipe="int8_weight_only")
    assert exports == [("student.onnx", "onnx", False, dict(quantization="dynamic")), "released"]
    for formats in ([], ["pdf"], None):
        with pytest.raises(ValueError, match=r"`formats` must be a non-empty list of \['tflite', "
                                             r"'mediapipe', 'onnx'\]\. Received: formats="
                                             + re.escape(repr(formats))):
            shipping.check_formats(formats)


@pytest.mark.parametrize("kwargs, message", [
    (dict(name="out/student"), r"`name` must be a file name .*Received: name='out/student'"),
    (dict(name=""), r"Received: name=''"),
    (dict(recipe="int3"), r"`recipe` must be one of the weight quantization recipes .*"
                          r"Received: recipe='int3'"),
    (dict(mediapipe_length=0), r"`mediapipe_length` must be a positive int"),
    (dict(overwrite="no"), r"`overwrite` must be a bool\. Received: overwrite='no'"),
    (dict(latency_runs=-1), r"`latency_runs` must be .*Received: latency_runs=-1"),
])
def test_a_bad_argument_is_named_before_any_export(exports, tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        shipping.ship("embedder", tmp_path, **{"name": "student", **kwargs})
    assert exports == []


def test_each_file_is_run_as_its_runtime_runs_it(tmp_path):
    path = tmp_path / "echo.tflite"
    path.write_bytes(echo_tflite())
    (run_batch,) = shipping.file_runner("tflite", path).values()
    assert set(shipping.file_runner("tflite", path)) == {"run_batch"}
    assert run_batch(np.array([[3, 4]], "int32"), np.array([[1, 0]], "int32")).tolist() == [[3, 0]]
    # MediaPipe tokenizes raw text itself: its runner takes texts, and loads the file when run.
    assert set(shipping.file_runner("mediapipe", path)) == {"embed_texts"}
