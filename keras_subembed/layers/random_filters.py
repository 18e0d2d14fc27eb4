"""ALONE's fixed random filters, regenerated from (token id, seed) by an integer hash.

Every random quantity of an `ALONEEmbedding` is a pure function of integers:

* `row_choices(ids)`: for each of the M source matrices, the row (of c) that
  token `id` draws -- `mix(mix(id ^ k_rows) ^ salt_i) mod c`;
* `source_entries(i, row)`: the D0 entries of row `row` of source matrix i --
  `mix(mix(row ^ salt'_i) ^ column_key_j)`, turned into a Bernoulli bit or an
  approximately Gaussian integer.

`mix` is Wellons' `lowbias32` hash on int32, written with `bitwise_xor`,
`right_shift`, `mod` and wrapping int32 multiply only -- all TFLite builtins
(`bitwise_and` is not one) -- so the graph, XLA and TFLite compute the same
bits. Run eagerly, the same functions give the stored mode's weights and the
seed's keys: there is one implementation of each formula (the tests hold an
independent NumPy reference).

Filters are summed in integers and scaled once at the end, so they are
bit-identical in every runtime, whatever order a compiler sums in.
"""

import contextlib
import types

import keras
import numpy as np
import tensorflow as tf
from keras import ops

_MULTIPLIER_1 = 0x7FEB352D
_MULTIPLIER_2 = 0x846CA68B
_ROW_PURPOSE = 0x3C6EF372
_ROW_SALT_PURPOSE = 0x510E527F
_ENTRY_SALT_PURPOSE = 0x1F83D9AB
_COLUMN_PURPOSE = 0x5BE0CD19
# Bernoulli bits compare the low 24 bits of a hash with a threshold.
BERNOULLI_BITS = 24
# A real entry is the sum of the 4 bytes of a hash, centred: an Irwin-Hall
# (approximately Gaussian) integer in [-510, 510] with this variance.
BYTE_SUM_CENTRE = 510
BYTE_SUM_VARIANCE = 4 * (256**2 - 1) / 12


def _as_int32(value):
    """A uint32 bit pattern as the int32 with the same bits."""
    return int(np.array(value, dtype=np.uint32).view(np.int32))


def _logical_right_shift(x, bits):
    # right_shift on int32 is arithmetic; taking the result mod 2^(32-bits)
    # clears the copied sign bits, like a logical shift, without bitwise_and.
    return ops.mod(ops.right_shift(x, bits), 2 ** (32 - bits))


def mix(x):
    """`lowbias32` on an int32 tensor, with TFLite-builtin integer ops only."""
    x = ops.bitwise_xor(x, _logical_right_shift(x, 16))
    x = ops.multiply(x, _as_int32(_MULTIPLIER_1))
    x = ops.bitwise_xor(x, _logical_right_shift(x, 15))
    x = ops.multiply(x, _as_int32(_MULTIPLIER_2))
    return ops.bitwise_xor(x, _logical_right_shift(x, 16))


def _mix_now(values):
    """`mix` of uint32 `values`, run eagerly: int32 NumPy results."""
    values = np.asarray(values, dtype=np.uint32).view(np.int32)
    with _eager_scope():
        return ops.convert_to_numpy(mix(ops.convert_to_tensor(values, dtype="int32")))


def _eager_scope():
    # Keys are layer constants: compute them eagerly even when a layer is
    # created while a tf.function traces.
    if keras.backend.backend() == "tensorflow":
        return tf.init_scope()
    return contextlib.nullcontext()


def filter_keys(seed, num_source_matrices, base_dim):
    """The int32 constants derived from a seed (M + D0 values at most)."""
    seed = np.uint32(seed)

    def salts(count, purpose):
        key = _mix_now(seed ^ np.uint32(purpose)).view(np.uint32)
        return _mix_now(np.arange(count, dtype=np.uint32) ^ key)

    return types.SimpleNamespace(
        rows=int(_mix_now(seed ^ np.uint32(_ROW_PURPOSE))),
        row_salts=salts(num_source_matrices, _ROW_SALT_PURPOSE),
        entry_salts=salts(num_source_matrices, _ENTRY_SALT_PURPOSE),
        columns=salts(base_dim, _COLUMN_PURPOSE),
    )


def row_choices(token_ids, keys, source_columns):
    """int32 `(..., M)`: the source-matrix row each id draws from each matrix."""
    token_hash = mix(ops.bitwise_xor(token_ids, keys.rows))
    salted = ops.bitwise_xor(
        ops.expand_dims(token_hash, -1), ops.convert_to_tensor(keys.row_salts)
    )
    return ops.mod(mix(salted), source_columns)


def source_entries(rows, keys):
    """int32 `(..., M, D0)` hashes of the entries of the chosen rows `(..., M)`."""
    row_hash = mix(ops.bitwise_xor(rows, ops.convert_to_tensor(keys.entry_salts)))
    columns = ops.convert_to_tensor(keys.columns)
    return mix(ops.bitwise_xor(ops.expand_dims(row_hash, -1), columns))


def bernoulli_threshold(zero_probability, num_source_matrices):
    """Integer threshold so that each of M bits is 1 with p = 1 - p0^(1/M)."""
    one_probability = 1.0 - zero_probability ** (1.0 / num_source_matrices)
    return int(round(one_probability * 2**BERNOULLI_BITS))


def check_threshold(threshold, zero_probability, num_source_matrices):
    """`ValueError` when `p0` makes every binary bit the same (degenerate filters)."""
    if 0 < threshold < 2**BERNOULLI_BITS:
        return
    resolution = 2.0**-BERNOULLI_BITS
    # threshold = round((1 - p0^(1/M)) * 2^24) must stay in [1, 2^24 - 1].
    lowest = (0.5 * resolution) ** num_source_matrices
    highest = (1 - 0.5 * resolution) ** num_source_matrices
    outcome = "all-zero filters" if threshold <= 0 else "identical filters for every id"
    raise ValueError(
        f"`p0`={zero_probability!r} with num_source_matrices={num_source_matrices} "
        f"gives {outcome} (bits are drawn at {BERNOULLI_BITS}-bit resolution). "
        f"Use p0 in ({lowest:.6g}, {highest:.10g})."
    )


def entry_values(entry_hashes, filter_kind, threshold):
    """Integer source-matrix entries: 0/1 bits (binary) or centred byte sums (real)."""
    if filter_kind == "binary":
        low_bits = ops.mod(entry_hashes, 2**BERNOULLI_BITS)
        return ops.cast(ops.less(low_bits, threshold), "int32")
    byte_sum = sum(
        ops.mod(ops.right_shift(entry_hashes, 8 * byte), 256) for byte in range(4)
    )
    return byte_sum - BYTE_SUM_CENTRE


def combine_entries(entries, filter_kind, num_source_matrices):
    """Filters `(..., D0)` float32 from integer entries `(..., M, D0)`.

    Binary: the clipped sum (1 where any bit is 1). Real: the integer sum,
    scaled once so each source entry has variance 1/M and the filter about 1.
    """
    total = ops.sum(entries, axis=-2)
    if filter_kind == "binary":
        return ops.cast(ops.minimum(total, 1), "float32")
    scale = 1.0 / np.sqrt(num_source_matrices * BYTE_SUM_VARIANCE)
    return ops.cast(total, "float32") * np.float32(scale)


