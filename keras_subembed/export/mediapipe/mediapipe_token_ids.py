"""The token ids MediaPipe's own BERT tokenizer gives: a probe file that returns its inputs."""

import keras_hub
import numpy as np
import tensorflow as tf

from keras_subembed.export.mediapipe.mediapipe_embedder import MediaPipeEmbedder
from keras_subembed.export.mediapipe.mediapipe_format import MEDIAPIPE_INPUTS
from keras_subembed.export.mediapipe.mediapipe_format import check_length
from keras_subembed.export.mediapipe.mediapipe_format import mediapipe_tokenizer_file
from keras_subembed.export.mediapipe.mediapipe_format import with_mediapipe_metadata


def mediapipe_token_ids(tokenizer, texts, sequence_length=128):
    """The ids MediaPipe Tasks' `TextEmbedder` feeds a model for each of `texts`.

    MediaPipe tokenizes inside its C++ graph and shows no ids; this builds a
    tiny file with the same metadata as `export_mediapipe` writes (a BERT
    tokenizer, or the renumbered SentencePiece model) whose "embedding" is
    its `ids` input where `mask` is 1, runs it in `TextEmbedder` and reads
    the ids back. Compare them with the model's own tokenizer to see what
    the phone's tokenizer does with case, accents and punctuation.

    Args:
        tokenizer: a keras-hub tokenizer of a kind MediaPipe has
            (`WordPieceTokenizer`, `XLMRobertaTokenizer`), or a WordPiece
            vocabulary (list of tokens).
        texts: a non-empty list of strings.
        sequence_length: int >= 3, the length MediaPipe pads or truncates to
            (`[CLS]` and `[SEP]` included). Defaults to 128.

    Returns:
        A list of int lists, one per text: `[CLS] ... [SEP]` (XLM-R: `<s>`
        ... `</s>`), padding removed.

    Example:
    ```python
    mediapipe_token_ids(tokenizer, ["Café au lait."])
    ```
    """
    if isinstance(texts, str) or not texts or not all(isinstance(t, str) for t in texts):
        raise ValueError(f"`texts` must be a non-empty list of strings. Received: texts={texts!r:.200}")
    sequence_length = check_length(sequence_length)
    spec = tf.TensorSpec((1, sequence_length), tf.int32)

    @tf.function(input_signature=[spec] * len(MEDIAPIPE_INPUTS))
    def echo(ids, mask, segment_ids):
        # -1 marks padding (id 0 is XLM-R's <s>); 0 * segment_ids keeps that input.
        kept = tf.where(mask > 0, ids + 0 * segment_ids, -1)
        return {"embedding": tf.cast(kept, tf.float32)}

    converter = tf.lite.TFLiteConverter.from_concrete_functions(
        [echo.get_concrete_function()], echo)
    if isinstance(tokenizer, (list, tuple)):  # a WordPiece vocabulary
        tokenizer = keras_hub.tokenizers.WordPieceTokenizer(vocabulary=list(tokenizer))
    flatbuffer = with_mediapipe_metadata(
        converter.convert(), mediapipe_tokenizer_file(tokenizer), "token_ids_probe")
    ids = []
    with MediaPipeEmbedder(flatbuffer) as task:
        for text in texts:
            row = np.rint(task.embed(text)).astype("int64")
            ids.append([int(i) for i in row[row >= 0]])
    return ids
