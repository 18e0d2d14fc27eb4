"""Checks that a code array is a valid k-sub-embedding assignment."""

import numpy as np

from keras_subembed.checks import check_bool
from keras_subembed.checks import check_positive_int
from keras_subembed.checks import is_integer

_MAX_LISTED = 5


def _listed(items):
    items = list(items)
    shown = ", ".join(str(item) for item in items[:_MAX_LISTED])
    if len(items) > _MAX_LISTED:
        shown += f", ... ({len(items)} in all)"
    return shown


def check_codes(codes, rows_per_table=None, num_ids=None, num_tables=None, distinct=True):
    """Return `codes` as an int64 array after checking it; raise `ValueError`.

    Checks: integer dtype, shape `(num_ids, num_tables)`, every code in
    `[0, rows_per_table)`, and (when `distinct`) every id a distinct code
    tuple. The error names the offending ids.
    """
    rows_per_table, num_ids, num_tables = (
        None if value is None else check_positive_int(name, value) for name, value in (
            ("rows_per_table", rows_per_table), ("num_ids", num_ids),
            ("num_tables", num_tables)))
    distinct = check_bool("distinct", distinct)
    array = np.asarray(codes)
    if array.dtype == bool or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(
            "Codes must be an integer array of shape (input_dim, num_tables). "
            f"Received an array of dtype {array.dtype}."
        )
    expected = (num_ids, num_tables)
    if array.ndim != 2 or any(
        want is not None and got != want for got, want in zip(array.shape, expected)
    ):
        shown = ", ".join("?" if want is None else str(want) for want in expected)
        raise ValueError(
            f"Codes must have shape ({shown}) (input_dim, num_tables). "
            f"Received shape {array.shape}."
        )
    array = array.astype(np.int64)
    if rows_per_table is not None:
        bad_ids = np.flatnonzero(
            np.any((array < 0) | (array >= rows_per_table), axis=1)
        )
        if bad_ids.size:
            raise ValueError(
                f"Every code must be in [0, rows_per_table={rows_per_table}). "
                f"Out of range for ids {_listed(bad_ids)} (codes "
                f"{_listed(tuple(array[i].tolist()) for i in bad_ids[:_MAX_LISTED])})."
            )
    if not distinct:
        return array
    _, first, inverse, counts = np.unique(
        array, axis=0, return_index=True, return_inverse=True, return_counts=True
    )
    if np.any(counts > 1):
        shared = np.flatnonzero(counts[inverse.reshape(-1)] > 1)
        groups = {}
        for token in shared:
            groups.setdefault(tuple(array[token].tolist()), []).append(int(token))
        described = [
            f"ids {members} share code {code}"
            for code, members in list(groups.items())[:_MAX_LISTED]
        ]
        raise ValueError(
            "Every id needs a distinct code tuple; "
            f"{len(shared)} ids do not: " + "; ".join(described) + ". Codes that "
            "may share tuples (product codes) need `distinct_codes=False`."
        )
    return array


def check_reserved_ids(reserved_ids, num_ids):
    """Return reserved ids as a tuple of ints; they must be distinct and in range."""
    try:
        reserved = tuple(reserved_ids)
    except TypeError:
        raise ValueError(
            "`reserved_ids` must be a sequence of token ids. "
            f"Received: reserved_ids={reserved_ids!r}"
        ) from None
    for token in reserved:
        if not is_integer(token):
            raise ValueError(
                "`reserved_ids` must hold integer token ids. "
                f"Received: reserved_ids={reserved_ids!r}"
            )
        if not 0 <= token < num_ids:
            raise ValueError(
                f"`reserved_ids` must be in [0, input_dim={num_ids}). "
                f"Received id {token} in reserved_ids={list(reserved)}"
            )
    if len(set(reserved)) != len(reserved):
        raise ValueError(
            f"`reserved_ids` must be distinct. Received: {list(reserved)}"
        )
    return tuple(int(token) for token in reserved)


def check_reserved_codes(codes, reserved_ids):
    """Each reserved id must own, in some table, a row no ordinary id uses."""
    if not reserved_ids:
        return
    is_ordinary = np.ones(codes.shape[0], dtype=bool)
    is_ordinary[list(reserved_ids)] = False
    ordinary = codes[is_ordinary]
    used_rows = [set(np.unique(ordinary[:, k]).tolist()) for k in range(codes.shape[1])]
    sharing = [
        token
        for token in reserved_ids
        if all(codes[token, k] in used_rows[k] for k in range(codes.shape[1]))
    ]
    if sharing:
        raise ValueError(
            "Each reserved id needs, in at least one table, a row that no "
            "ordinary id uses. Reserved ids sharing every row with ordinary "
            f"ids: {_listed(sharing)}."
        )


def check_token_weights(weights, num_ids, name="weights"):
    """Per-token weights as a float64 `(num_ids,)` array, or `ValueError` saying what is wrong.

    Weights must be finite, non-negative and not all zero; a token of weight
    zero still gets a code, it just does not pull any centroid.
    """
    array = np.asarray(weights)
    if array.dtype == bool or not (
        np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)
    ):
        raise ValueError(
            f"`{name}` must be a numeric array of one weight per token. "
            f"Received dtype {array.dtype}."
        )
    if array.shape != (num_ids,):
        raise ValueError(
            f"`{name}` must have shape ({num_ids},): one weight per id of the table. "
            f"Received shape {array.shape}."
        )
    array = array.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(array) | (array < 0))
    if bad.size:
        raise ValueError(
            f"`{name}` must be finite and >= 0. Bad values at ids {_listed(bad)} "
            f"({_listed(array[bad[:_MAX_LISTED]].tolist())})."
        )
    if not array.any():
        raise ValueError(f"`{name}` are all zero: at least one token needs a positive weight.")
    return array
