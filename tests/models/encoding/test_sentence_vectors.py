"""`sentence_vectors`: keras-hub's pooling and normalisation of token states."""

import re

import keras
import numpy as np
import pytest

from keras_subembed.models import sentence_vectors


def numpy_pooling(states, mask, mode):
    mask = mask.astype(bool)
    if mode == "cls":
        pooled = states[:, 0]
    elif mode == "mean":
        pooled = np.stack([s[m].mean(axis=0) for s, m in zip(states, mask)])
    else:
        pooled = np.stack([s[m].max(axis=0) for s, m in zip(states, mask)])
    return pooled / np.linalg.norm(pooled, axis=-1, keepdims=True)


@pytest.mark.parametrize("mode", ["mean", "cls", "max"])
def test_pooling_matches_numpy_over_valid_tokens_only(mode):
    rng = np.random.default_rng(0)
    states = rng.normal(size=(3, 6, 5)).astype("float32")
    mask = np.array([[1, 1, 1, 1, 1, 1], [1, 1, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0]], "int32")
    got = keras.ops.convert_to_numpy(sentence_vectors(states, mask, mode))
    np.testing.assert_allclose(got, numpy_pooling(states, mask, mode), rtol=1e-5, atol=1e-6)
    # Values behind the padding do not matter.
    states[mask == 0] = 1e6
    np.testing.assert_allclose(keras.ops.convert_to_numpy(sentence_vectors(states, mask, mode)),
                               got, rtol=1e-5, atol=1e-6)


def test_an_all_padding_row_gives_zeros_not_nan():
    pooled = sentence_vectors(np.ones((1, 3, 4), "float32"), np.zeros((1, 3), "int32"))
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(pooled), np.zeros((1, 4)))


def test_bad_arguments_raise_naming_them():
    states, mask = np.ones((1, 3, 4), "float32"), np.ones((1, 3), "int32")
    with pytest.raises(ValueError, match=re.escape(
            "`pooling_mode` must be \"mean\" or \"cls\" or \"max\". Received: pooling_mode='sum'")):
        sentence_vectors(states, mask, "sum")
    with pytest.raises(ValueError, match=re.escape("`normalize` must be a bool. Received: normalize=1")):
        sentence_vectors(states, mask, normalize=1)
