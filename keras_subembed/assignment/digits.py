"""Algorithm 1 of k-sub-embedding: codes are the base-M digits of the token id."""

import numpy as np

from keras_subembed.assignment.code_space import codes_from_slots


def digit_codes(num_ids, num_tables, rows_per_table, reserved_ids=()):
    """Codes of ids `0 .. num_ids-1` by digits (0-based: `floor(n / M^k) mod M`).

    With reserved ids, ordinary ids are numbered by rank and their rank is
    decoded (see `keras_subembed.assignment.code_space`). `SubEmbedding`
    computes the same codes inside the graph with the same `decode_slots`;
    this NumPy version serves analysis.

    Example:
    >>> digit_codes(5, num_tables=3, rows_per_table=2)[3].tolist()
    [1, 1, 0]
    """
    num_ordinary = num_ids - len(tuple(reserved_ids))
    return codes_from_slots(
        np.arange(num_ordinary),
        num_ids,
        rows_per_table,
        num_tables,
        reserved_ids,
    )
