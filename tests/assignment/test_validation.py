"""`check_codes`, `check_reserved_ids`, `check_reserved_codes`: a code array checked, the
offending ids named."""

import numpy as np
import pytest

from keras_subembed.assignment import check_codes
from keras_subembed.assignment.validation import check_reserved_codes
from keras_subembed.assignment.validation import check_reserved_ids


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
