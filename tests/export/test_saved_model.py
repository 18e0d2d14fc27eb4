"""`export_saved_model`: a folder staged beside its target; a killed export's staging is
removed by the next one."""

import os
import pathlib
import signal
import subprocess

import pytest

from keras_subembed.export import export_saved_model
from keras_subembed.export import export_tflite
from keras_subembed.export import saved_model as saved_model_module

# Export (SavedModel, TFLite) is TensorFlow's; from JAX it runs in a TensorFlow process.
pytestmark = pytest.mark.tensorflow_only(reason="export to SavedModel / TFLite")


def dead_pid():
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def test_killed_saved_model_export_leaves_staging_the_next_run_removes(model, tmp_path,
                                                                       monkeypatch):
    def write_then_get_killed(model, directory, serving_inputs):
        (pathlib.Path(directory) / "saved_model.pb").write_bytes(b"half")
        os.kill(os.getpid(), signal.SIGKILL)

    monkeypatch.setattr(saved_model_module, "write_saved_model", write_then_get_killed)
    child = os.fork()
    if child == 0:  # the export that gets killed
        try:
            export_saved_model(model, tmp_path / "saved")
        finally:
            os._exit(1)
    _, status = os.waitpid(child, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    (stale,) = tmp_path.iterdir()
    assert stale.name.startswith(".saved.partial-")
    (tmp_path / f".m.tflite.partial-{dead_pid()}-0123abcd").write_bytes(b"killed")
    monkeypatch.undo()
    export_saved_model(model, tmp_path / "saved")
    export_tflite(model, tmp_path / "m.tflite")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.tflite", "saved"]
