import numpy as np
import pytest

from keras_subembed.assignment import check_codes
from keras_subembed.assignment import digit_codes
from keras_subembed.assignment import minimum_rows_per_table
from keras_subembed.assignment import ordinary_capacity
from keras_subembed.assignment import random_codes
from keras_subembed.assignment.code_space import smallest_code_dtype
from keras_subembed.assignment.validation import check_reserved_codes
from keras_subembed.assignment.validation import check_reserved_ids


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


def test_random_codes_are_distinct_deterministic_and_seeded():
    first = random_codes(5000, 3, 18, seed=7)
    check_codes(first, 18)
    np.testing.assert_array_equal(first, random_codes(5000, 3, 18, seed=7))
    assert (first != random_codes(5000, 3, 18, seed=8)).any()
    # Not simply the digit order.
    assert (first != digit_codes(5000, 3, 18)).any()


def test_random_codes_tight_capacity():
    codes = random_codes(32_768, 3, 32, seed=0)  # every code used
    check_codes(codes, 32)


def test_check_codes_names_duplicate_ids():
    codes = np.array([[0, 1], [1, 0], [0, 1], [2, 2]])
    with pytest.raises(ValueError, match=r"ids \[0, 2\] share code \(0, 1\)"):
        check_codes(codes, 3)


def test_check_codes_names_out_of_range_ids():
    with pytest.raises(ValueError, match=r"rows_per_table=3\).*ids 1 \(codes \(1, 5\)\)"):
        check_codes(np.array([[0, 1], [1, 5]]), 3)
    with pytest.raises(ValueError, match=r"ids 0 \(codes \(-1, 0\)\)"):
        check_codes(np.array([[-1, 0], [1, 1]]), 3)


def test_check_codes_rejects_wrong_dtype_and_shape():
    with pytest.raises(ValueError, match="integer array.*float64"):
        check_codes(np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"shape \(4, 2\).*Received shape \(3, 2\)"):
        check_codes(np.zeros((3, 2), int), num_ids=4, num_tables=2)
    with pytest.raises(ValueError, match=r"Received shape \(6,\)"):
        check_codes(np.arange(6))


def test_check_reserved_ids_errors():
    assert check_reserved_ids([3, np.int64(1)], 5) == (3, 1)
    with pytest.raises(ValueError, match=r"in \[0, input_dim=5\).*id 5"):
        check_reserved_ids([5], 5)
    with pytest.raises(ValueError, match="distinct"):
        check_reserved_ids([1, 1], 5)
    with pytest.raises(ValueError, match="integer token ids"):
        check_reserved_ids(["pad"], 5)


def test_check_reserved_codes_requires_an_exclusive_row():
    codes = np.array([[0, 0], [1, 0], [0, 1], [1, 1]])
    with pytest.raises(ValueError, match="ordinary ids: 0"):
        check_reserved_codes(codes, (0,))
    exclusive = np.array([[2, 0], [1, 0], [0, 1], [1, 1]])
    check_reserved_codes(exclusive, (0,))


@pytest.mark.parametrize(
    "rows, dtype", [(2, "uint8"), (256, "uint8"), (257, "int16"), (40_000, "int32")]
)
def test_smallest_code_dtype(rows, dtype):
    assert smallest_code_dtype(rows) == dtype
