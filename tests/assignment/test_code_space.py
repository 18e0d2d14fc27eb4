"""The code space: rows per table, the capacity left by reserved ids, the code dtype, and
one decoding formula for NumPy codes and SubEmbedding's in-graph digits."""

import keras
import numpy as np
import pytest

from keras_subembed.assignment import digit_codes
from keras_subembed.assignment import minimum_rows_per_table
from keras_subembed.assignment import ordinary_capacity
from keras_subembed.assignment.code_space import decode_slots
from keras_subembed.assignment.code_space import smallest_code_dtype
from keras_subembed.layers import SubEmbedding
from tests.layers.layer_contract import compiled


@pytest.mark.parametrize("reserved", [(), (0, 5, 17)])
def test_graph_digits_equal_numpy_digits_eager_and_xla(reserved):
    layer = SubEmbedding(500, 6, num_tables=3, rows_per_table=10, reserved_ids=reserved)
    want = digit_codes(500, 3, 10, reserved)
    ids = np.arange(500, dtype="int32")
    eager = np.stack([np.asarray(c) for c in layer.token_codes(ids)], axis=1)
    layer.build()
    xla = compiled(lambda x: keras.ops.stack(layer.token_codes(x), axis=1))(ids)
    np.testing.assert_array_equal(eager, want)
    np.testing.assert_array_equal(xla, want)


def test_decoding_large_int32_slots_does_not_overflow():
    # M^K = 2000^3 > 2^31: forming M^k would overflow int32; step-wise division does not.
    slots = np.array([0, 1999, 2000, 2**31 - 1], dtype=np.int64)
    want = np.stack(decode_slots(slots, 2000, 3), axis=1)
    got = np.stack([np.asarray(c) for c in decode_slots(keras.ops.convert_to_tensor(slots.astype("int32")), 2000, 3)], axis=1)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(want[-1], [(2**31 - 1) % 2000, (2**31 - 1) // 2000 % 2000,
                                             (2**31 - 1) // 2000**2])


@pytest.mark.parametrize(
    "num_ids, num_tables, expected",
    [
        (50_265, 2, 225),
        (50_265, 3, 37),
        (50_265, 4, 15),
        (50_265, 8, 4),
        (250_002, 3, 63),
        (27, 3, 3),  # exact power: the authors' int(V**(1/K)) + 1 gives 4
        (28, 3, 4),
        (1, 3, 1),
    ],
)
def test_minimum_rows_per_table_matches_paper(num_ids, num_tables, expected):
    assert minimum_rows_per_table(num_ids, num_tables) == expected


def test_minimum_rows_with_reserved_is_minimal():
    rows = minimum_rows_per_table(30_522, 3, num_reserved=5)
    assert ordinary_capacity(rows, 3, 5) >= 30_517
    assert ordinary_capacity(rows - 1, 3, 5) < 30_517


@pytest.mark.parametrize(
    "rows, dtype", [(2, "uint8"), (256, "uint8"), (257, "int16"), (40_000, "int32")]
)
def test_smallest_code_dtype(rows, dtype):
    assert smallest_code_dtype(rows) == dtype
