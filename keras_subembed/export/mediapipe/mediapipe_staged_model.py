"""`MediaPipeStagedModel`: what `MediaPipeFormat.stage` makes, beyond a `StagedModel`."""

import dataclasses

from keras_subembed.export.staged_model import StagedModel


@dataclasses.dataclass(frozen=True)
class MediaPipeStagedModel(StagedModel):
    """A `StagedModel` whose `samples` are texts, with what MediaPipe's file fixes.

    Args:
        sequence_length: the length MediaPipe pads or cuts every text to.
        mediapipe_tokenizer: `(writer, file name, bytes)`: the class of
            MediaPipe's metadata writers and the tokenizer file it carries.
        embedder: the `MediaPipeEmbedder` running the file while it is
            measured (None before).

    Example:
    >>> staged = MediaPipeStagedModel(model="embedder", serving_inputs=None,
    ...                               samples=["a text"], sequence_length=16)
    >>> staged.sequence_length, staged.embedder
    (16, None)
    """

    sequence_length: int = None
    mediapipe_tokenizer: tuple = None
    embedder: object = None
