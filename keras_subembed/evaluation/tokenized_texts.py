"""Texts tokenized once and embedded in batches of similar length."""

import numpy as np

from keras_subembed.checks import check_positive_int
from keras_subembed.length_order import check_texts
from keras_subembed.length_order import embed_by_length


class TokenizedTexts:
    """Token ids of texts, packed once, embedded in batches of similar length.

    Batches hold texts of similar length and are cut to their longest row, so
    an encoder runs on little padding.

    Args:
        texts: a non-empty list of str (a single str is refused, not read as
            a list of characters).
        preprocessor: a keras-hub text preprocessor giving `token_ids` and
            `padding_mask` (e.g. a `TextEmbedder`'s).
        batch_size: int. Texts per batch. Defaults to 64.

    Example:
    >>> tokenizer = keras_hub.models.BertTokenizer(
    ...     vocabulary=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"])
    >>> preprocessor = keras_hub.models.BertTextEmbedderPreprocessor(tokenizer, sequence_length=8)
    >>> texts = TokenizedTexts(["a b a", "b"], preprocessor)
    >>> texts.embed(lambda ids, mask: mask.sum(axis=1, keepdims=True)).ravel().tolist()
    [5.0, 3.0]
    """

    def __init__(self, texts, preprocessor, batch_size=64):
        self.batch_size = check_positive_int("batch_size", batch_size)
        features = preprocessor(check_texts("texts", texts))
        self.token_ids = np.asarray(features["token_ids"], dtype="int32")
        self.padding_mask = np.asarray(features["padding_mask"], dtype="int32")
        self.lengths = self.padding_mask.sum(axis=1)

    def embed(self, run_batch):
        """Vectors `(len(texts), d)` from `run_batch(token_ids, padding_mask) -> vectors`,
        which must return one row per text (`ValueError` otherwise)."""
        return embed_by_length(self.lengths, self.batch_size, lambda rows, length: run_batch(
            self.token_ids[rows, :length], self.padding_mask[rows, :length]))
