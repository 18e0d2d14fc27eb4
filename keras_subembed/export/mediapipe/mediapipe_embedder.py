"""Running a MediaPipe Tasks text-embedder file in MediaPipe's own `TextEmbedder`."""

import numpy as np

from keras_subembed.export.errors import ExportVerificationError
from keras_subembed.optional import mediapipe_base_options
from keras_subembed.optional import mediapipe_text_embedder


class MediaPipeEmbedder:
    """MediaPipe's `TextEmbedder` on a file's bytes, raw vectors (no re-normalising).

    A context manager: the task opens on entry and closes on exit.

    Args:
        flatbuffer: bytes of a MediaPipe Tasks `.tflite` file (what
            `export_mediapipe` writes).

    Example:
    ```python
    with MediaPipeEmbedder(open("minilm.mediapipe.tflite", "rb").read()) as task:
        vector = task.embed("A sentence.")  # float32 (d,)
    ```
    """

    def __init__(self, flatbuffer):
        self.flatbuffer = flatbuffer

    def __enter__(self):
        options = mediapipe_text_embedder.TextEmbedderOptions(
            base_options=mediapipe_base_options.BaseOptions(model_asset_buffer=self.flatbuffer),
            l2_normalize=False, quantize=False)
        try:
            self.task = mediapipe_text_embedder.TextEmbedder.create_from_options(options)
        except Exception as error:
            raise ExportVerificationError(f"MediaPipe's TextEmbedder cannot load the file: {error}") from error
        return self

    def __exit__(self, *unused):
        self.task.close()

    def embed(self, text):
        result = self.task.embed(text)
        return np.asarray(result.embeddings[0].embedding, "float32")
