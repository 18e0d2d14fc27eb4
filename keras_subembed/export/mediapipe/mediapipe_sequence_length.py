"""`mediapipe_sequence_length`: the fixed length a MediaPipe file pads every text to, chosen from text."""

import math

import keras_hub
import numpy as np

from keras_subembed.checks import check_positive_int
from keras_subembed.checks import is_real
from keras_subembed.export.mediapipe.mediapipe_format import check_embedder
from keras_subembed.export.mediapipe.mediapipe_sentencepiece import ascii_lowercase
from keras_subembed.export.model_parts import max_sequence_length
from keras_subembed.tokenizer_kinds import find_tokenizer_kind
from keras_subembed.tokenizer_kinds.registry import mediapipe_kinds

# [CLS] and [SEP] (<s> and </s>): MediaPipe packs every text between them.
SPECIAL_TOKENS = 2
# The shortest file MediaPipe runs: [CLS], one token, [SEP].
SHORTEST = 3
# Texts tokenized at once: the ragged ids of a large corpus stay small.
CHUNK = 1024


def mediapipe_sequence_length(tokenizer_or_embedder, texts, coverage=0.99, multiple=8):
    """The shortest fixed length that fits `coverage` of `texts` whole.

    MediaPipe's `TextEmbedder` pads every text to the length the file fixes
    (`export_mediapipe(..., sequence_length=...)`), so a text of 10 tokens
    costs what one of the full length costs (attention grows with the
    square of it). Choose the length from the texts the app embeds:
    the shortest one that holds `coverage` of them uncut, special tokens
    included, as MediaPipe tokenizes them (ASCII letters lowercased).

    Args:
        tokenizer_or_embedder: a keras-hub `TextEmbedder` with a tokenizer
            of a kind MediaPipe has (WordPiece, XLM-R SentencePiece; the
            result is then capped at its position table), or such a tokenizer.
        texts: a non-empty list of strings like those the app embeds.
        coverage: the fraction of `texts` that must fit whole, in (0, 1].
        multiple: round the length up to a multiple of this (8 suits the
            CPU kernels); the model's limit wins over the rounding.

    Returns:
        An int from 3 to the model's `max_sequence_length` (when known).

    Example:
    ```python
    length = mediapipe_sequence_length(embedder, ["short text", "a longer one ..."])
    report = export_mediapipe(embedder, "e5.tflite", sequence_length=length)
    print(report.sequence_length)
    ```
    """
    tokenizer, limit = _tokenizer_and_limit(tokenizer_or_embedder)
    texts = _check_texts(texts)
    if not is_real(coverage) or not 0 < coverage <= 1:
        raise ValueError(
            f"`coverage` must be a number in (0, 1]. Received: coverage={coverage!r}")
    multiple = check_positive_int("multiple", multiple)
    counts = np.sort(token_counts(tokenizer, texts) + SPECIAL_TOKENS)
    # The smallest count that at least `coverage` of the texts do not exceed.
    covering = int(counts[max(0, math.ceil(coverage * len(counts) - 1e-9) - 1)])
    length = multiple * math.ceil(max(covering, SHORTEST) / multiple)
    return length if limit is None else max(SHORTEST, min(length, limit))


def token_counts(tokenizer, texts):
    """The number of tokens of each text, no special tokens, as MediaPipe tokenizes it."""
    counts = []
    for start in range(0, len(texts), CHUNK):
        seen = [ascii_lowercase(text) for text in texts[start:start + CHUNK]]
        ids = tokenizer(seen)
        if hasattr(ids, "row_lengths"):  # tf.RaggedTensor on TensorFlow
            counts.extend(np.asarray(ids.row_lengths()).tolist())
        else:  # lists of ids on the other backends
            counts.extend(len(row) for row in ids)
    return np.asarray(counts, "int64")


def _tokenizer_and_limit(tokenizer_or_embedder):
    if isinstance(tokenizer_or_embedder, keras_hub.models.TextEmbedder):
        return check_embedder(tokenizer_or_embedder), max_sequence_length(tokenizer_or_embedder)
    kind = find_tokenizer_kind(tokenizer_or_embedder)
    if kind is not None and kind.mediapipe_writer:
        return tokenizer_or_embedder, None
    # The tokenizer classes of the kinds MediaPipe has (`tokenizer_kinds`).
    classes = [kind.class_name for kind in mediapipe_kinds()]
    raise TypeError(
        f"`tokenizer_or_embedder` must be a keras-hub TextEmbedder, {', '.join(classes[:-1])} "
        f"or {classes[-1]}. Received: "
        f"tokenizer_or_embedder={type(tokenizer_or_embedder).__name__}")


def _check_texts(texts):
    if isinstance(texts, str) or not isinstance(texts, (list, tuple)) or not texts or not all(
            isinstance(text, str) for text in texts):
        raise ValueError(
            f"`texts` must be a non-empty list of strings. Received: texts={texts!r:.200}")
    return list(texts)
