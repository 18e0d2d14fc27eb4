"""Texts tokenized once and embedded in batches of similar length."""

import numpy as np


class TokenizedTexts:
    """Token ids of texts, packed once, embedded in batches of similar length.

    Batches hold texts of similar length and are cut to their longest row, so
    an encoder runs on little padding.

    Args:
        texts: list of str.
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
        features = preprocessor(list(texts))
        self.token_ids = np.asarray(features["token_ids"], dtype="int32")
        self.padding_mask = np.asarray(features["padding_mask"], dtype="int32")
        self.lengths = self.padding_mask.sum(axis=1)
        order = np.argsort(self.lengths, kind="stable")
        self.batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]

    def embed(self, run_batch):
        """Vectors `(len(texts), d)` from `run_batch(token_ids, padding_mask) -> vectors`."""
        vectors = None
        for rows in self.batches:
            length = int(self.lengths[rows].max())
            out = np.asarray(run_batch(self.token_ids[rows, :length],
                                       self.padding_mask[rows, :length]))
            if vectors is None:
                vectors = np.zeros((len(self.token_ids), out.shape[-1]), "float32")
            vectors[rows] = out
        return vectors
