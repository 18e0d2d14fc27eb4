"""The shared argument checks: one rule each, NumPy scalars accepted as Keras does."""

import re

import numpy as np
import pytest

from keras_subembed import checks


@pytest.mark.parametrize("value", [1, 7, np.int64(7), np.uint8(3), np.int32(2**31 - 1)])
def test_positive_int_accepts_python_and_numpy_integers(value):
    got = checks.check_positive_int("units", value)
    assert got == value and type(got) is int


@pytest.mark.parametrize("value", [0, -1, 1.0, np.float32(2), True, np.bool_(True), "3", None])
def test_positive_int_rejects_naming_the_argument(value):
    with pytest.raises(ValueError, match=re.escape(f"`units` must be a positive integer. Received: units={value!r}")):
        checks.check_positive_int("units", value)


def test_seed_rule_is_one_range_and_names_the_argument():
    assert checks.check_seed(np.uint32(2**32 - 1)) == 2**32 - 1
    assert type(checks.check_seed(np.int64(5))) is int
    drawn = checks.check_seed(None)
    assert 0 <= drawn < 2**32
    for bad in (-1, 2**32, 1.5, "1", True):
        with pytest.raises(ValueError, match=re.escape(
                f"`seed` must be an int in [0, 2**32) or None. Received: seed={bad!r}")):
            checks.check_seed(bad)


def test_rates_and_probabilities():
    assert checks.check_rate("dropout", np.float32(0.25)) == 0.25
    assert checks.check_rate("dropout", 0) == 0.0
    assert checks.check_open_probability("p0", np.float64(0.5)) == 0.5
    for bad in (1.0, -0.1, np.nan, True, "0.1"):
        with pytest.raises(ValueError, match=r"`dropout` must be a float in \[0, 1\)"):
            checks.check_rate("dropout", bad)
    for bad in (0.0, 1.0, np.nan, np.bool_(False)):
        with pytest.raises(ValueError, match="`p0` must be a probability strictly between 0 and 1"):
            checks.check_open_probability("p0", bad)


def test_bool_and_choice():
    assert checks.check_bool("mixer", np.bool_(True)) is True
    with pytest.raises(ValueError, match="`mixer` must be a bool. Received: mixer=1"):
        checks.check_bool("mixer", 1)
    assert checks.check_choice("norm", None, ("layer_norm", None)) is None
    with pytest.raises(ValueError, match=re.escape("`norm` must be \"layer_norm\" or None. Received: norm='batch'")):
        checks.check_choice("norm", "batch", ("layer_norm", None))


# --- issue 32 ---------------------------------------------------------------------------


def test_non_negative_int_takes_zero_and_refuses_fractions():
    assert checks.check_non_negative_int("refinements", np.int64(0)) == 0
    for bad in (-1, 2.5, True, "2"):
        with pytest.raises(ValueError, match=re.escape(
                f"`refinements` must be an integer >= 0. Received: refinements={bad!r}")):
            checks.check_non_negative_int("refinements", bad)


def test_finite_array_names_where_the_nan_is():
    np.testing.assert_array_equal(checks.check_finite_array("table", [[1, 2]]), [[1.0, 2.0]])
    with pytest.raises(ValueError, match=re.escape(
            "`table` must hold finite numbers; it has 2 NaN or infinite values, at "
            "[(0, 1), (1, 0)]")):
        checks.check_finite_array("table", [[1.0, np.nan], [np.inf, 0.0]])
    with pytest.raises(TypeError, match=re.escape(
            "`table` must be an array of numbers. Received dtype <U1")):
        checks.check_finite_array("table", [["a"]])


def test_id_values_refuse_fractions_and_strings_but_pass_whole_floats_and_nan():
    checks.check_id_values("token_ids", np.array([1.0, 60.0, np.nan, 1e10]))
    with pytest.raises(ValueError, match=re.escape(
            "`token_ids` must hold whole-number token ids: a fractional id is not an id (it "
            "would silently be truncated to another token). Received: [-0.5, 60.9].")):
        checks.check_id_values("token_ids", np.array([[60.9, 3.0], [-0.5, 60.9]]))
    for bad in (np.array(["5"]), np.array([True])):
        with pytest.raises(TypeError, match=re.escape(
                "`token_ids` must hold integer token ids (any integer or float dtype). "
                f"Received: token_ids of dtype {bad.dtype}")):
            checks.check_id_values("token_ids", bad)
