"""Adding an assignment is one function and its registration; the layer then
takes it by name, in its constructor and in `from_pretrained`."""

import re

import keras
import numpy as np
import pytest

from keras_subembed.assignment import ASSIGNMENTS
from keras_subembed.assignment import register_assignment
from keras_subembed.assignment import registry
from keras_subembed.layers import SubEmbedding


# --- a throw-away assignment that reads no table: one new function ----------------------
def stripes(num_ids, num_tables, rows_per_table, reserved_ids=(), seed=0):
    """Table k gives token n row `(n + k * seed) mod M`."""
    ids = np.arange(num_ids)[:, None]
    return (ids + seed * np.arange(num_tables)[None, :]) % rows_per_table


# --- and one that fits a pretrained table, with an option of its own ---------------------
def signs(table, num_tables, rows_per_table, token_weights=None, threshold=0.0):
    """Row 1 of table k where the k-th column chunk sums above `threshold`, else row 0."""
    chunks = np.array_split(np.asarray(table), num_tables, axis=1)
    return np.stack([chunk.sum(axis=1) > threshold for chunk in chunks], axis=1).astype(int)


@pytest.fixture
def registered():
    before = dict(registry._ASSIGNMENTS)
    register_assignment("test_stripes", stripes, reads_table=False, distinct_codes=False)
    register_assignment("test_signs", signs, rows_per_table=2, distinct_codes=False)
    yield
    registry._ASSIGNMENTS.clear()
    registry._ASSIGNMENTS.update(before)


def test_a_new_assignment_works_in_the_constructor_and_from_pretrained(registered):
    layer = SubEmbedding(40, 6, num_tables=3, rows_per_table=7, assignment="test_stripes",
                         seed=2, distinct_codes=False)
    np.testing.assert_array_equal(layer.code_array(), stripes(40, 3, 7, seed=2))
    assert layer.get_config()["assignment"] == "test_stripes"
    copy = SubEmbedding.from_config(layer.get_config())
    np.testing.assert_array_equal(copy.code_array(), layer.code_array())

    table = np.random.default_rng(0).normal(size=(40, 6)).astype("float32")
    pretrained = SubEmbedding.from_pretrained(table, num_tables=3, rows_per_table=7,
                                              assignment="test_stripes", seed=2)
    np.testing.assert_array_equal(pretrained.code_array(), stripes(40, 3, 7, seed=2))
    # Each row is the mean of the chunks of the tokens that use it.
    rows = keras.ops.convert_to_numpy(pretrained.sub_tables[0])
    np.testing.assert_allclose(rows[3], table[pretrained.code_array()[:, 0] == 3, :2].mean(axis=0),
                               rtol=1e-5)


def test_a_table_assignment_fits_through_from_pretrained_with_its_options(registered):
    table = np.random.default_rng(1).normal(size=(50, 8)).astype("float32")
    layer = SubEmbedding.from_pretrained(table, num_tables=4, assignment="test_signs")
    assert (layer.rows_per_table, layer.distinct_codes) == (2, False)
    np.testing.assert_array_equal(layer.code_array(), signs(table, 4, 2))
    shifted = SubEmbedding.from_pretrained(table, num_tables=4, assignment="test_signs",
                                           assignment_options={"threshold": 0.5})
    np.testing.assert_array_equal(shifted.code_array(), signs(table, 4, 2, threshold=0.5))
    with pytest.raises(ValueError, match=re.escape(
            "Assignment 'test_signs' takes no option 'balanced'")):
        SubEmbedding.from_pretrained(table, num_tables=4, assignment="test_signs",
                                     assignment_options={"balanced": True})
    with pytest.raises(ValueError, match=re.escape(
            "`assignment='test_signs'` fits codes to a pretrained table: use "
            "`SubEmbedding.from_pretrained(table, assignment='test_signs')`")):
        SubEmbedding(50, 8, num_tables=4, assignment="test_signs")


def test_the_registry_names_what_it_holds_and_cannot_be_edited_in_place(registered):
    with pytest.raises(ValueError, match=re.escape(
            "`assignment` must be one of ['clustered', 'digits', 'product', 'random', ") + ".*" +
            re.escape("'test_signs', 'test_stripes'], \"explicit\" or an integer array of "
                      "codes. Received: assignment='kmeans'")):
        SubEmbedding(50, 8, assignment="kmeans")
    with pytest.raises(TypeError):
        ASSIGNMENTS["mine"] = ASSIGNMENTS["random"]
    with pytest.raises(ValueError, match="'test_signs' is already registered"):
        register_assignment("test_signs", stripes)
    with pytest.raises(ValueError, match="other than \"explicit\""):
        register_assignment("explicit", stripes)


def test_an_assignment_whose_fit_returns_no_codes_is_refused(registered):
    register_assignment("test_nothing", lambda num_ids, num_tables, rows_per_table: None,
                        reads_table=False)
    with pytest.raises(ValueError, match=r"Assignment 'test_nothing': its fit '<lambda>' must "
                                         r"return integer codes of shape \(number of ids, "
                                         r"num_tables=3\)\. Received: None"):
        SubEmbedding(40, 6, num_tables=3, rows_per_table=7, assignment="test_nothing")


def test_only_digit_codes_may_be_unstored(registered):
    # The layer computes only digit codes in its graph: any other unstored
    # assignment would give every token the same vector.
    with pytest.raises(ValueError, match=r"`stored=False` is only for the digit codes.*"
                                         r"Received: stored=False for 'test_unstored' "
                                         r"\(fit='stripes'\)"):
        register_assignment("test_unstored", stripes, reads_table=False, stored=False)
    assert "test_unstored" not in ASSIGNMENTS


@pytest.mark.parametrize("keywords, error, message", [
    ({"num_tables": 5}, TypeError,
     r"`num_tables` must be None or a callable `width -> K`.*Received: num_tables=5"),
    ({"reads_table": "no"}, ValueError, r"`reads_table` must be a bool\. Received: reads_table='no'"),
    ({"rows_per_table": "7"}, ValueError,
     r"`rows_per_table` must be a positive integer\. Received: rows_per_table='7'"),
    ({"distinct_codes": None}, ValueError, r"`distinct_codes` must be a bool"),
    ({"stored": 0}, ValueError, r"`stored` must be a bool\. Received: stored=0"),
])
def test_registration_arguments_are_checked_when_registering(registered, keywords, error, message):
    with pytest.raises(error, match=message):
        register_assignment("test_checked", stripes, **keywords)
    assert "test_checked" not in ASSIGNMENTS


def test_fit_codes_names_a_number_of_ids_that_is_not_one():
    with pytest.raises(ValueError, match=r"`table` must be the number of ids \(a positive int\) "
                                         r"or a table of that many rows for assignment 'digits', "
                                         r"which reads no vectors\. Received: table=10\.5"):
        registry.fit_codes("digits", 10.5, 2, 4)
    with pytest.raises(ValueError, match=r"`table` must be a positive integer\. Received: table=0"):
        registry.fit_codes("digits", 0, 2, 4)
    assert registry.fit_codes("digits", 10, 2, 4).shape == (10, 2)
    assert registry.fit_codes("digits", np.zeros((10, 3)), 2, 4).shape == (10, 2)
