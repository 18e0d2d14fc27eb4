"""`check_texts` and `embed_by_length`: texts checked by name, embedded in batches of
similar length, each vector back in its text's row."""

import numpy as np
import pytest

from keras_subembed.length_order import check_texts
from keras_subembed.length_order import embed_by_length
from keras_subembed.length_order import shown


def test_batches_hold_texts_of_similar_length_and_rows_return_in_order():
    lengths = np.array([5, 1, 3, 1, 4])
    calls = []

    def run_batch(rows, length):
        calls.append((rows.tolist(), length))
        return np.stack([rows, np.full(len(rows), length)], axis=1)

    vectors = embed_by_length(lengths, 2, run_batch)
    # Stable order of length: ids 1, 3 (length 1), 2 (3), 4 (4), 0 (5); each batch cut to its longest.
    assert calls == [([1, 3], 1), ([2, 4], 4), ([0], 5)]
    assert vectors.dtype == np.float32
    assert vectors[:, 0].tolist() == [0, 1, 2, 3, 4]  # row i is text i's
    assert vectors[:, 1].tolist() == [5, 1, 4, 1, 4]


def test_a_run_batch_returning_one_row_for_the_batch_is_refused():
    with pytest.raises(ValueError, match=r"`run_batch` must return one vector per text: "
                                         r"shape \(2, d\) for a batch of 2 texts\. "
                                         r"Received: shape \(1, 3\)"):
        embed_by_length(np.array([2, 2]), 8, lambda rows, length: np.ones((1, 3)))


def test_texts_are_checked_by_name():
    assert check_texts("queries", ("a", "b")) == ["a", "b"]
    assert check_texts("queries", np.array(["a", "b"])) == ["a", "b"]
    with pytest.raises(TypeError, match=r"`queries` must be a list of strings; a single string "
                                        r"would be read .* Pass \[queries\]\. Received: queries='a b'"):
        check_texts("queries", "a b")
    with pytest.raises(TypeError, match=r"`queries` must be a list of strings\. Received: queries=7"):
        check_texts("queries", 7)
    with pytest.raises(ValueError, match=r"`queries` holds no sentences: nothing to embed\. "
                                         r"Received: queries=\(\)"):
        check_texts("queries", ())
    with pytest.raises(TypeError, match=r"Received: an element None of type NoneType"):
        check_texts("queries", ["a", None])


def test_long_values_are_shown_cut():
    assert shown("x" * 10) == repr("x" * 10)
    text = shown(list(range(100)), limit=20)
    assert len(text) == 20 and text.endswith("...") and text.startswith("[0, 1, 2")
