"""The token ids MediaPipe's own BERT tokenizer gives: a probe file that returns its inputs."""

import numpy as np

from keras_subembed.export.mediapipe import MEDIAPIPE_INPUTS
from keras_subembed.export.mediapipe import check_length
from keras_subembed.export.mediapipe import with_mediapipe_metadata
from keras_subembed.export.mediapipe_embedder import MediaPipeEmbedder


def mediapipe_token_ids(vocabulary, texts, sequence_length=128):
    """The ids MediaPipe Tasks' `TextEmbedder` feeds a model for each of `texts`.

    MediaPipe tokenizes inside its C++ graph and shows no ids; this builds a
    tiny file with the same metadata (BERT tokenizer, `vocabulary`) whose
    "embedding" is its `ids` input, runs it in `TextEmbedder` and reads the
    ids back. Compare them with the model's own tokenizer to see what the
    phone's tokenizer does with case, accents and punctuation.

    Args:
        vocabulary: the WordPiece vocabulary, a list of tokens.
        texts: a non-empty list of strings.
        sequence_length: int >= 3, the length MediaPipe pads or truncates to
            (`[CLS]` and `[SEP]` included). Defaults to 128.

    Returns:
        A list of int lists, one per text: `[CLS] ... [SEP]`, padding removed.

    Example:
    >>> mediapipe_token_ids(tokenizer.vocabulary, ["Café au lait."])
    """
    if isinstance(texts, str) or not texts or not all(isinstance(t, str) for t in texts):
        raise ValueError(f"`texts` must be a non-empty list of strings. Received: texts={texts!r:.200}")
    sequence_length = check_length(sequence_length)
    import tensorflow as tf

    spec = tf.TensorSpec((1, sequence_length), tf.int32)

    @tf.function(input_signature=[spec] * len(MEDIAPIPE_INPUTS))
    def echo(ids, mask, segment_ids):
        # Id + 1 where the mask marks a token, 0 for padding (whatever [PAD]'s
        # id); 0 * segment_ids keeps that input in the file.
        kept = tf.cast((ids + 1) * mask + 0 * segment_ids, tf.float32)
        return {"embedding": kept}

    converter = tf.lite.TFLiteConverter.from_concrete_functions(
        [echo.get_concrete_function()], echo)
    flatbuffer = with_mediapipe_metadata(converter.convert(), vocabulary, "token_ids_probe")
    ids = []
    with MediaPipeEmbedder(flatbuffer) as task:
        for text in texts:
            row = np.rint(task.embed(text)).astype("int64")
            ids.append([int(i) - 1 for i in row[row != 0]])
    return ids
