"""Vectors of many texts computed in batches of similar length (the one loop
behind `models.encode_by_length` and `evaluation.TokenizedTexts`)."""

import numpy as np


def shown(value, limit=80):
    """`repr(value)` cut to `limit` characters, for messages."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def check_texts(name, texts):
    """`texts` as a list once it is a non-empty list (tuple, array) of strings.

    A single string is refused (`TypeError`), not read as a list of its characters.
    """
    if isinstance(texts, (str, bytes)):
        raise TypeError(
            f"`{name}` must be a list of strings; a single string would be read as a list "
            f"of its characters. Pass [{name}]. Received: {name}={shown(texts)}")
    if not isinstance(texts, (list, tuple, np.ndarray)):
        raise TypeError(f"`{name}` must be a list of strings. Received: {name}={shown(texts)}")
    if len(texts) == 0:
        raise ValueError(f"`{name}` holds no sentences: nothing to embed. "
                         f"Received: {name}={shown(texts)}")
    for text in np.asarray(texts, dtype=object).reshape(-1):
        if not isinstance(text, (str, bytes)):
            raise TypeError(
                f"`{name}` must hold sentences (strings). "
                f"Received: an element {text!r} of type {type(text).__name__}")
    return list(texts)


def embed_by_length(lengths, batch_size, run_batch):
    """float32 `(len(lengths), d)`: row i from `run_batch(rows, length) -> vectors`,
    called on the indices `rows` of up to `batch_size` texts in order of their
    `lengths` (stable), with `length` their longest."""
    order = np.argsort(lengths, kind="stable")
    vectors = None
    for start in range(0, len(order), batch_size):
        rows = order[start:start + batch_size]
        out = np.asarray(run_batch(rows, int(lengths[rows].max())), np.float32)
        # NumPy would broadcast one row over the batch: every text the same vector.
        if out.ndim != 2 or len(out) != len(rows):
            raise ValueError(
                f"`run_batch` must return one vector per text: shape ({len(rows)}, d) for "
                f"a batch of {len(rows)} texts. Received: shape {out.shape}")
        if vectors is None:
            vectors = np.zeros((len(order), out.shape[-1]), np.float32)
        vectors[rows] = out
    return vectors
