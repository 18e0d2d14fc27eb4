"""An independent NumPy reference of `keras_subembed.layers.random_filters`.

The package has one implementation (keras.ops, run eagerly for the stored
mode and the keys); this uint32 NumPy version, written from the formulas in
that module's docstring, is what the tests hold it to, bit for bit.
"""

import numpy as np

from keras_subembed.layers import random_filters

_MULTIPLIER_1 = 0x7FEB352D
_MULTIPLIER_2 = 0x846CA68B


def mix(values):
    """`lowbias32` on uint32, returned as the int32 with the same bits."""
    x = np.asarray(values).astype(np.uint32)
    with np.errstate(over="ignore"):
        x ^= x >> np.uint32(16)
        x *= np.uint32(_MULTIPLIER_1)
        x ^= x >> np.uint32(15)
        x *= np.uint32(_MULTIPLIER_2)
        x ^= x >> np.uint32(16)
    return x.view(np.int32)


def row_choices(token_ids, keys, source_columns):
    token_hash = mix(np.asarray(token_ids).astype(np.uint32) ^ np.uint32(keys.rows))
    salted = token_hash.astype(np.uint32)[..., None] ^ keys.row_salts.astype(np.uint32)
    return mix(salted).astype(np.int64) % source_columns


def source_entries(rows, keys):
    row_hash = mix(np.asarray(rows).astype(np.uint32) ^ keys.entry_salts.astype(np.uint32))
    return mix(row_hash.astype(np.uint32)[..., None] ^ keys.columns.astype(np.uint32))


def entry_values(entry_hashes, filter_kind, threshold):
    unsigned = np.asarray(entry_hashes).view(np.uint32).astype(np.int64)
    if filter_kind == "binary":
        return (unsigned % 2**random_filters.BERNOULLI_BITS < threshold).astype(np.int32)
    byte_sum = sum((unsigned >> (8 * byte)) % 256 for byte in range(4))
    return (byte_sum - random_filters.BYTE_SUM_CENTRE).astype(np.int32)


def combine_entries(entries, filter_kind, num_source_matrices):
    total = np.asarray(entries).astype(np.int64).sum(axis=-2)
    if filter_kind == "binary":
        return np.minimum(total, 1).astype(np.float32)
    scale = np.float32(1.0 / np.sqrt(num_source_matrices * random_filters.BYTE_SUM_VARIANCE))
    return total.astype(np.float32) * scale


def filter_keys(seed, num_source_matrices, base_dim):
    """The keys `random_filters.filter_keys` must give (checked by a test)."""
    seed = np.uint32(seed)

    def salts(count, purpose):
        key = mix(seed ^ np.uint32(purpose)).view(np.uint32)
        return mix(np.arange(count, dtype=np.uint32) ^ key)

    return dict(
        rows=int(mix(seed ^ np.uint32(0x3C6EF372))),
        row_salts=salts(num_source_matrices, 0x510E527F),
        entry_salts=salts(num_source_matrices, 0x1F83D9AB),
        columns=salts(base_dim, 0x5BE0CD19),
    )


def filters(layer, ids):
    """The filters of `ids` for an `ALONEEmbedding`, in NumPy."""
    rows = row_choices(ids, layer._keys, layer.source_columns)
    entries = entry_values(source_entries(rows, layer._keys), layer.filter_kind, layer._threshold)
    return combine_entries(entries, layer.filter_kind, layer.num_source_matrices)
