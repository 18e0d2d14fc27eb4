"""Which gather layout a trace gets (XLA and GPUs, or TensorFlow's own kernels), and the
two layouts of side-by-side parts, which hold the same values."""

import keras
import numpy as np
import pytest

from keras_subembed.layers.gather_layout import column_gathers_are_fast
from keras_subembed.layers.gather_layout import side_by_side
from keras_subembed.layers.gather_layout import zero_padded_sum


def parts():
    rng = np.random.default_rng(0)
    return [rng.normal(size=(2, 3, width)).astype("float32") for width in (4, 1, 5)]


def test_the_zero_padded_sum_is_the_concatenation():
    want = np.concatenate(parts(), axis=-1)
    got = keras.ops.convert_to_numpy(zero_padded_sum([keras.ops.convert_to_tensor(p) for p in parts()]))
    np.testing.assert_array_equal(got, want)  # each position: one part's value plus zeros


def test_side_by_side_is_the_concatenation_on_this_backend_eager_and_compiled():
    want = np.concatenate(parts(), axis=-1)
    tensors = [keras.ops.convert_to_tensor(p) for p in parts()]
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(side_by_side(tensors)), want)
    if keras.backend.backend() == "jax":
        import jax

        compiled = jax.jit(lambda *x: side_by_side(list(x)))(*tensors)
        np.testing.assert_array_equal(np.asarray(compiled), want)


@pytest.mark.tensorflow_only(reason="TensorFlow's own kernels, and its XLA context")
def test_tensorflow_takes_rows_except_under_xla():
    import tensorflow as tf

    if tf.config.list_logical_devices("GPU"):
        pytest.skip("on a GPU every trace takes columns")
    seen = []

    def trace(x):
        seen.append(column_gathers_are_fast())
        return x

    assert column_gathers_are_fast() is False  # eager
    tf.function(trace)(tf.constant(1.0))
    tf.function(trace, jit_compile=True)(tf.constant(1.0))
    assert seen == [False, True]


@pytest.mark.jax_only(reason="every JAX function runs through XLA")
def test_jax_takes_columns():
    assert column_gathers_are_fast() is True
