"""`digit_codes`: the base-M digits of the token id (Algorithm 1), reserved ids first."""

import numpy as np

from keras_subembed.assignment import check_codes
from keras_subembed.assignment import digit_codes


def test_digit_codes_follow_corrected_formula():
    num_ids, rows, tables = 1000, 10, 3
    codes = digit_codes(num_ids, tables, rows)
    ids = np.arange(num_ids)
    for k in range(tables):
        np.testing.assert_array_equal(codes[:, k], (ids // rows**k) % rows)
    assert codes[123].tolist() == [3, 2, 1]


def test_digit_codes_with_reserved_ids_keep_table_zero_rows_for_them():
    reserved = (0, 100, 101, 102, 103)
    codes = digit_codes(30_522, 3, 34, reserved)
    check_codes(codes, 34)
    for slot, token in enumerate(reserved):
        assert codes[token].tolist() == [slot] * 3
    ordinary = np.delete(codes, reserved, axis=0)
    assert ordinary[:, 0].min() == len(reserved)
