"""Test setup: the Keras backend and the markers for backend-specific tests.

The backend is `KERAS_BACKEND` when set (`tensorflow` or `jax`), else TensorFlow.
`@pytest.mark.tensorflow_only(reason=...)` marks a test that is TensorFlow's by
nature (TFLite, SavedModel, tf.distribute); `@pytest.mark.jax_only(reason=...)`
one that is JAX's (keras.distribution). On another backend they are skipped
with that reason.
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import pytest  # noqa: E402

BACKEND_MARKERS = {"tensorflow_only": "tensorflow", "jax_only": "jax"}


def pytest_report_header(config):
    return f"Keras backend: {os.environ['KERAS_BACKEND']}"


def pytest_collection_modifyitems(config, items):
    backend = os.environ["KERAS_BACKEND"]
    for item in items:
        for name, needed in BACKEND_MARKERS.items():
            marker = item.get_closest_marker(name)
            if marker is None:
                continue
            reason = marker.kwargs.get("reason") or (marker.args[0] if marker.args else None)
            if not reason:
                raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.{name} needs a reason=")
            if backend != needed:
                item.add_marker(pytest.mark.skip(reason=f"{needed} only: {reason}"))
