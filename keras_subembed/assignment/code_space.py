"""The code space shared by every assignment: reserved codes and capacity.

A token's *code* is a tuple of `num_tables` row indices, one per sub-table.
The rule for reserved ids (special tokens such as pad, cls, sep, mask):

* the j-th reserved id gets the code `(j, j, ..., j)`;
* rows `0 .. R-1` of table 0 are used by reserved ids only, so every ordinary
  token differs from every reserved token in table 0 and never shares that
  sub-vector with it;
* ordinary ids are numbered by *rank* (their position among the non-reserved
  ids in increasing order) and take codes whose table-0 row is in `[R, M)`.

Ordinary slot `s` (an integer in `[0, ordinary_capacity)`) decodes to
`c_0 = R + s mod (M - R)`, `c_k = floor(floor(s / (M - R)) / M^(k-1)) mod M`
for `k >= 1`. Without reserved ids this is exactly the k-sub-embedding digit
formula `c_k = floor(s / M^k) mod M`.
"""

import numpy as np

from keras_subembed.checks import check_non_negative_int
from keras_subembed.checks import check_positive_int

# Codes are gathered as int32 indices.
MAX_ROWS_PER_TABLE = 2**31 - 1


def ordinary_capacity(rows_per_table, num_tables, num_reserved=0):
    """Number of distinct codes left for ordinary (non-reserved) ids."""
    rows_per_table = check_positive_int("rows_per_table", rows_per_table)
    num_tables = check_positive_int("num_tables", num_tables)
    num_reserved = check_non_negative_int("num_reserved", num_reserved)
    return (rows_per_table - num_reserved) * rows_per_table ** (num_tables - 1)


def minimum_rows_per_table(num_ids, num_tables, num_reserved=0):
    """Smallest M such that `num_ids` ids (R of them reserved) get distinct codes.

    Example:
    >>> minimum_rows_per_table(50_265, 3)
    37
    """
    num_ids = check_positive_int("num_ids", num_ids)
    num_tables = check_positive_int("num_tables", num_tables)
    num_reserved = check_non_negative_int("num_reserved", num_reserved)
    num_ordinary = num_ids - num_reserved
    rows = max(int(round(num_ordinary ** (1.0 / num_tables))) - 1, 1)
    rows = max(rows, num_reserved + 1)
    while ordinary_capacity(rows, num_tables, num_reserved) < num_ordinary:
        rows += 1
    return rows


def decode_slots(slots, rows_per_table, num_tables, num_reserved=0):
    """The `num_tables` code columns of ordinary slots (see the module docstring).

    The one implementation of the formula: it uses only `%`, `//` and `+`,
    so it decodes NumPy arrays (the assignments here) and backend tensors
    (`SubEmbedding`'s in-graph digits) alike, and returns a list of columns
    of the same kind. Dividing step by step never forms `M^k`, which would
    overflow int32 in a graph.
    """
    ordinary_rows = rows_per_table - num_reserved
    columns = [num_reserved + slots % ordinary_rows]
    rest = slots // ordinary_rows
    for _ in range(1, num_tables):
        columns.append(rest % rows_per_table)
        rest = rest // rows_per_table
    return columns


def codes_from_slots(slots, num_ids, rows_per_table, num_tables, reserved_ids=()):
    """Full (num_ids, K) code array: reserved ids get `(j,)*K`, the rest `slots`.

    `slots[r]` is the ordinary slot of the ordinary id of rank `r`.
    """
    reserved_ids = np.asarray(list(reserved_ids), dtype=np.int64)
    codes = np.empty((num_ids, num_tables), dtype=np.int64)
    is_ordinary = np.ones(num_ids, dtype=bool)
    is_ordinary[reserved_ids] = False
    slots = np.asarray(slots, dtype=np.int64)
    codes[is_ordinary] = np.stack(
        decode_slots(slots, rows_per_table, num_tables, len(reserved_ids)), axis=1
    ).reshape(-1, num_tables)
    codes[reserved_ids] = np.arange(len(reserved_ids))[:, None]
    return codes


def smallest_code_dtype(rows_per_table):
    """Smallest integer dtype that holds codes `< rows_per_table` (and TFLite gathers)."""
    if rows_per_table <= 2**8:
        return "uint8"
    if rows_per_table <= 2**15:
        return "int16"
    return "int32"


def check_rows_limit(rows_per_table):
    """`rows_per_table` unless int32 indices cannot address that many rows."""
    if rows_per_table > MAX_ROWS_PER_TABLE:
        raise ValueError(
            f"`rows_per_table` must be at most 2**31 - 1 (codes are int32 "
            f"indices). Received: rows_per_table={rows_per_table}"
        )
    return rows_per_table


def check_rows_per_table(rows_per_table, num_ids, num_tables, num_reserved=0):
    """`rows_per_table` as an int if it gives every id a distinct code, else `ValueError`."""
    minimum = minimum_rows_per_table(num_ids, num_tables, num_reserved)
    if rows_per_table is None:
        return minimum
    rows_per_table = check_rows_limit(check_positive_int("rows_per_table", rows_per_table))
    if (
        rows_per_table <= num_reserved
        or ordinary_capacity(rows_per_table, num_tables, num_reserved)
        < num_ids - num_reserved
    ):
        raise ValueError(
            f"`rows_per_table={rows_per_table}` with num_tables={num_tables} "
            f"gives too few distinct codes for input_dim={num_ids}"
            + (f" with {num_reserved} reserved ids" if num_reserved else "")
            + f". The smallest rows_per_table that works is {minimum}."
        )
    return int(rows_per_table)
