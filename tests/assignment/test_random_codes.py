"""`random_codes`: a seeded injection of ids onto distinct codes."""

import numpy as np

from keras_subembed.assignment import check_codes
from keras_subembed.assignment import digit_codes
from keras_subembed.assignment import random_codes


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
