"""Exporting from another backend: a `.keras` file is converted in a TensorFlow process.

SavedModel and TFLite are TensorFlow formats, and a model traced on JAX does
not convert to builtins-only TFLite. A JAX user saves the model and passes
the path; the export then runs here, in a subprocess with
`KERAS_BACKEND=tensorflow`, and its result (or error) comes back.
"""

import os
import pathlib
import pickle
import subprocess
import sys
import tempfile

import keras
import numpy as np

from keras_subembed.export.errors import UnsupportedBackendError

# The folder holding the `keras_subembed` package, so the child imports this copy.
PACKAGE_ROOT = str(pathlib.Path(__file__).resolve().parents[2])


def is_tensorflow_backend():
    return keras.backend.backend() == "tensorflow"


def tensorflow_environment():
    environment = dict(os.environ, KERAS_BACKEND="tensorflow")
    environment.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    paths = [PACKAGE_ROOT] + [p for p in environment.get("PYTHONPATH", "").split(os.pathsep) if p]
    environment["PYTHONPATH"] = os.pathsep.join(paths)
    return environment


def live_model_error(function_name):
    return UnsupportedBackendError(
        f"`{function_name}` needs the TensorFlow backend to trace a live model; this "
        f"process runs Keras on {keras.backend.backend()!r}. To ship it, save it and "
        f"pass the file: `model.save('model.keras')`, then `{function_name}('model.keras', "
        "...)` converts it in a TensorFlow subprocess (or run `python device/convert.py "
        "model.keras --tflite model.tflite`)."
    )


def run_export(function_name, model, source, **kwargs):
    """`keras_subembed.export.<function_name>(source, **kwargs)` in a TensorFlow process."""
    if source is None:
        raise live_model_error(function_name)
    kwargs = dict(kwargs, model=str(source))
    if kwargs.get("representative_dataset") is not None:
        kwargs["representative_dataset"] = [
            keras.tree.map_structure(np.asarray, sample)
            for sample in kwargs["representative_dataset"]()
        ]
    if kwargs.get("sample_inputs") is not None:
        kwargs["sample_inputs"] = keras.tree.map_structure(
            lambda x: np.asarray(keras.ops.convert_to_numpy(x)), kwargs["sample_inputs"])
    with tempfile.TemporaryDirectory() as tmp:
        request, response = pathlib.Path(tmp, "request.pkl"), pathlib.Path(tmp, "response.pkl")
        request.write_bytes(pickle.dumps((function_name, kwargs)))
        result = subprocess.run(
            [sys.executable, "-m", "keras_subembed.export.tensorflow_child", str(request),
             str(response)],
            env=tensorflow_environment(), capture_output=True, text=True,
        )
        if not response.exists():
            raise RuntimeError(
                f"The TensorFlow process exporting {source} failed (exit code "
                f"{result.returncode}):\n{result.stderr[-3000:]}"
            )
        succeeded, value = pickle.loads(response.read_bytes())
    if not succeeded:
        raise value
    return value


def run_export_saving(function_name, model, source, **kwargs):
    """`run_export`, a live model first saved to a temporary `.keras` file."""
    if source is not None:
        return run_export(function_name, model, source, **kwargs)
    with tempfile.TemporaryDirectory() as tmp:
        saved = pathlib.Path(tmp, "model.keras")
        model.save(saved)
        return run_export(function_name, str(saved), saved, **kwargs)


def run_cli(argv):
    """Run the command line in a TensorFlow process; its exit code."""
    command = [sys.executable, "-m", "keras_subembed.export.cli", *argv]
    return subprocess.run(command, env=tensorflow_environment()).returncode
