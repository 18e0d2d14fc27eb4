"""Vectors of many texts computed in batches of similar length (the one loop
behind `models.encode_by_length` and `evaluation.TokenizedTexts`)."""

import numpy as np


def embed_by_length(lengths, batch_size, run_batch):
    """float32 `(len(lengths), d)`: row i from `run_batch(rows, length) -> vectors`,
    called on the indices `rows` of up to `batch_size` texts in order of their
    `lengths` (stable), with `length` their longest."""
    order = np.argsort(lengths, kind="stable")
    vectors = None
    for start in range(0, len(order), batch_size):
        rows = order[start:start + batch_size]
        out = np.asarray(run_batch(rows, int(lengths[rows].max())), np.float32)
        if vectors is None:
            vectors = np.zeros((len(order), out.shape[-1]), np.float32)
        vectors[rows] = out
    return vectors
