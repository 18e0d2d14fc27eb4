"""The token ids MediaPipe's own BERT tokenizer gives: a probe file that returns its inputs."""

import numpy as np

from keras_subembed.export.mediapipe import MEDIAPIPE_INPUTS
from keras_subembed.export.mediapipe import with_mediapipe_metadata
from keras_subembed.export.mediapipe_embedder import MediaPipeEmbedder


def mediapipe_token_ids(vocabulary, texts, sequence_length=128):
    """The ids MediaPipe Tasks' `TextEmbedder` feeds a model for each of `texts`.

    MediaPipe tokenizes inside its C++ graph and shows no ids; this builds a
    tiny file with the same metadata (BERT tokenizer, `vocabulary`) whose
    "embedding" is its `ids` input, runs it in `TextEmbedder` and reads the
    ids back. Compare them with the model's own tokenizer to see what the
    phone's tokenizer does with case, accents and punctuation.

    Returns:
        A list of int lists, one per text: `[CLS] ... [SEP]`, padding removed.

    Example:
    >>> mediapipe_token_ids(tokenizer.vocabulary, ["Café au lait."])
    """
    import tensorflow as tf

    if isinstance(texts, str) or not texts:
        raise ValueError(f"`texts` must be a non-empty list of strings. Received: texts={texts!r:.200}")
    spec = tf.TensorSpec((1, sequence_length), tf.int32)

    @tf.function(input_signature=[spec] * len(MEDIAPIPE_INPUTS))
    def echo(ids, mask, segment_ids):
        # Adds 0 * the other inputs so the converter keeps them as inputs.
        kept = tf.cast(ids + 0 * mask + 0 * segment_ids, tf.float32)
        return {"embedding": kept}

    converter = tf.lite.TFLiteConverter.from_concrete_functions(
        [echo.get_concrete_function()], echo)
    flatbuffer = with_mediapipe_metadata(converter.convert(), vocabulary, "token_ids_probe")
    ids = []
    with MediaPipeEmbedder(flatbuffer) as task:
        for text in texts:
            row = np.rint(task.embed(text)).astype("int64")
            ids.append([int(i) for i in row[row != 0]])
    return ids
