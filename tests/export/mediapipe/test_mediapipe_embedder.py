"""`MediaPipeEmbedder`: a file MediaPipe's TextEmbedder cannot load fails verification by name.
(Files that load and embed: tests/export/mediapipe/test_mediapipe_format.py.)"""

import pytest

pytest.importorskip("mediapipe", reason="no `mediapipe` wheel for this platform")

from keras_subembed.export import ExportVerificationError  # noqa: E402
from keras_subembed.export import MediaPipeEmbedder  # noqa: E402
from tests.tflite_utils import handmade_tflite  # noqa: E402


@pytest.mark.parametrize("data", [b"not a model", "a flatbuffer without MediaPipe's metadata"])
def test_a_file_mediapipe_cannot_load_is_an_export_verification_error(data):
    if isinstance(data, str):
        data = handmade_tflite([("x", (1, 4), "float32", None, None),
                                ("y", (1, 4), "float32", None, None)],
                               [("RELU", (0,), (1,))], inputs=(0,), outputs=(1,))
    with pytest.raises(ExportVerificationError, match="MediaPipe's TextEmbedder cannot load the file: "):
        with MediaPipeEmbedder(data):
            pass
