"""Codes of fewer than 8 bits, several to a byte.

With M <= 16 rows per table a code needs 4 bits, with M <= 4 two, with
M <= 2 one: `8 // bits` codes share a byte. Code k of a token lives in byte
`k // per_byte` at bit offset `bits * (k % per_byte)` (lowest bits first), so
it unpacks with floor division and remainder only -- TFLite builtins, unlike
`bitwise_and`.
"""

import math

import numpy as np

from keras_subembed.checks import check_positive_int

_PACKABLE_BITS = (1, 2, 4)


def bits_per_code(rows_per_table):
    """Bits a packed code of `rows_per_table` rows takes, or `None` above 16 rows.

    Example:
    >>> [bits_per_code(m) for m in (2, 3, 16, 17)]
    [1, 2, 4, None]
    """
    for bits in _PACKABLE_BITS:
        if rows_per_table <= 2**bits:
            return bits
    return None


def packed_width(num_tables, rows_per_table):
    """Bytes per token when `num_tables` codes of `rows_per_table` rows are packed."""
    return math.ceil(num_tables / (8 // bits_per_code(rows_per_table)))


def pack_codes(codes, rows_per_table):
    """`(V, K)` codes `< rows_per_table <= 16` as a `(V, packed_width)` uint8 array.

    Example:
    >>> pack_codes(np.array([[1, 2, 3]]), rows_per_table=16).tolist()
    [[33, 3]]
    """
    rows_per_table = check_positive_int("rows_per_table", rows_per_table)
    bits = bits_per_code(rows_per_table)
    if bits is None:
        raise ValueError(
            "Codes pack several to a byte only with `rows_per_table` <= 16. "
            f"Received: rows_per_table={rows_per_table}"
        )
    codes = np.asarray(codes, dtype=np.int64)
    per_byte = 8 // bits
    packed = np.zeros((codes.shape[0], packed_width(codes.shape[1], rows_per_table)), np.int64)
    for k in range(codes.shape[1]):
        packed[:, k // per_byte] += codes[:, k] << (bits * (k % per_byte))
    return packed.astype(np.uint8)


def unpack_codes(packed, rows_per_table, num_tables):
    """The `(V, num_tables)` int64 codes of a `pack_codes` array (NumPy)."""
    rows_per_table = check_positive_int("rows_per_table", rows_per_table)
    num_tables = check_positive_int("num_tables", num_tables)
    bits = bits_per_code(rows_per_table)
    per_byte = 8 // bits
    packed = np.asarray(packed, dtype=np.int64)
    return np.stack(
        [
            (packed[:, k // per_byte] >> (bits * (k % per_byte))) % (2**bits)
            for k in range(num_tables)
        ],
        axis=1,
    )
