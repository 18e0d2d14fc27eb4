"""Exporting from another backend in a TensorFlow process: its environment, the request's
arguments made picklable, the result or error brought back. The process is stood in for
by the child's own function, run here."""

import os
import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest

from keras_subembed import export
from keras_subembed.export import UnsupportedBackendError
from keras_subembed.export import tensorflow_child
from keras_subembed.export import tensorflow_process


@pytest.fixture
def child(monkeypatch):
    """`subprocess.run` serving the request here; `calls` holds each export's arguments."""
    calls, result = [], {"value": "report"}

    def fake_export(**kwargs):
        calls.append(kwargs)
        if isinstance(result["value"], Exception):
            raise result["value"]
        return result["value"]

    def run(command, env, capture_output, text):
        assert command[:3] == [sys.executable, "-m", "keras_subembed.export.tensorflow_child"]
        assert env["KERAS_BACKEND"] == "tensorflow"
        if result["value"] is None:  # the process died before answering
            return subprocess.CompletedProcess(command, -9, "", "Killed\n")
        tensorflow_child.serve_request(*command[3:])
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(export, "export", fake_export)
    monkeypatch.setattr(tensorflow_process.subprocess, "run", run)
    return calls, result


def test_the_environment_selects_tensorflow_and_this_copy_of_the_package(monkeypatch):
    monkeypatch.setenv("KERAS_BACKEND", "jax")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["/elsewhere", "/more"]))
    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    environment = tensorflow_process.tensorflow_environment()
    assert environment["KERAS_BACKEND"] == "tensorflow" and environment["TF_CPP_MIN_LOG_LEVEL"] == "2"
    paths = environment["PYTHONPATH"].split(os.pathsep)
    assert paths == [tensorflow_process.PACKAGE_ROOT, "/elsewhere", "/more"]
    assert (pathlib.Path(paths[0]) / "keras_subembed" / "export" / "tensorflow_process.py").is_file()
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "0")
    assert tensorflow_process.tensorflow_environment()["TF_CPP_MIN_LOG_LEVEL"] == "0"


def test_a_live_model_is_refused_where_the_format_cannot_save_it(child):
    calls, _ = child
    with pytest.raises(UnsupportedBackendError, match=r"Exporting a live model to "
                       r"format='saved_model' needs the TensorFlow backend.*`model\.save\("
                       r"'model\.keras'\)`, then `export\('model\.keras', path, "
                       r"format='saved_model'\)`"):
        tensorflow_process.run_export(keras.Sequential(), None, False, format="saved_model")
    assert calls == []


def test_the_arguments_reach_the_process_as_arrays_and_the_result_comes_back(child, tmp_path):
    calls, _ = child

    def representative_dataset():
        yield {"token_ids": keras.ops.ones((1, 3), "int32")}

    source = tmp_path / "m.keras"
    result = tensorflow_process.run_export(
        None, source, False, format="tflite", filepath=str(tmp_path / "m.tflite"),
        representative_dataset=representative_dataset,
        sample_inputs=[{"token_ids": keras.ops.zeros((2, 4), "int32")}])
    assert result == "report"
    (kwargs,) = calls
    assert kwargs["model"] == str(source) and kwargs["format"] == "tflite"
    (sample,) = list(kwargs["representative_dataset"]())
    assert type(sample["token_ids"]) is np.ndarray and sample["token_ids"].tolist() == [[1, 1, 1]]
    assert type(kwargs["sample_inputs"][0]["token_ids"]) is np.ndarray


def test_a_live_model_is_saved_for_the_process_and_its_error_raised_here(child, tmp_path):
    calls, result = child
    result["value"] = FileExistsError("'m.tflite' exists; pass overwrite=True to replace it.")
    inputs = keras.Input((3,))
    model = keras.Model(inputs, keras.layers.Dense(2)(inputs))
    with pytest.raises(FileExistsError, match="pass overwrite=True"):
        tensorflow_process.run_export(model, None, True, format="tflite", filepath="m.tflite")
    assert pathlib.Path(calls[0]["model"]).name == "model.keras"
    result["value"] = None
    with pytest.raises(RuntimeError, match=r"The TensorFlow process exporting .*m\.keras failed "
                                           r"\(exit code -9\):\nKilled"):
        tensorflow_process.run_export(None, tmp_path / "m.keras", False, format="tflite")


def test_the_command_line_runs_in_the_process_with_its_exit_code(monkeypatch):
    seen = []

    def run(command, env):
        seen.append((command, env["KERAS_BACKEND"]))
        return subprocess.CompletedProcess(command, 2)

    monkeypatch.setattr(tensorflow_process.subprocess, "run", run)
    assert tensorflow_process.run_cli(["m.keras", "--tflite", "m.tflite"]) == 2
    assert seen == [([sys.executable, "-m", "keras_subembed.export.cli", "m.keras", "--tflite",
                      "m.tflite"], "tensorflow")]
