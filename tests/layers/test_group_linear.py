"""`GroupLinear` beyond its block-diagonal values (tests/layers/test_define_embedding.py):
without a bias, rebuilt from its config, its arguments checked."""

import keras
import numpy as np
import pytest

from keras_subembed.layers import GroupLinear


def test_without_bias_each_group_maps_its_own_chunk():
    layer = GroupLinear(4, groups=2, use_bias=False)
    layer.build((None, 6))
    assert [weight.name for weight in layer.weights] == ["kernel"] and layer.bias is None
    kernel = np.arange(2 * 3 * 2, dtype="float32").reshape(2, 3, 2)
    layer.kernel.assign(kernel)
    inputs = np.array([[1, 0, 0, 0, 0, 1]], "float32")  # the first row of group 0, the last of 1
    outputs = keras.ops.convert_to_numpy(layer(inputs))
    np.testing.assert_array_equal(outputs, np.concatenate([kernel[0, 0], kernel[1, 2]])[None])
    assert layer.compute_output_shape((5, 7, 6)) == (5, 7, 4)


def test_a_layer_rebuilt_from_its_config_computes_the_same():
    layer = GroupLinear(6, groups=2, kernel_initializer="he_normal")
    x = np.random.default_rng(0).normal(size=(2, 3, 8)).astype("float32")
    outputs = keras.ops.convert_to_numpy(layer(x))
    copy = GroupLinear.from_config(layer.get_config())
    assert (copy.units, copy.groups, copy.use_bias) == (6, 2, True)
    assert isinstance(copy.kernel_initializer, keras.initializers.HeNormal)
    copy.build(x.shape)
    copy.set_weights(layer.get_weights())
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(copy(x)), outputs)


@pytest.mark.parametrize("kwargs, message", [
    (dict(units=0), "`units` must be a positive int"),
    (dict(units=4, groups=2.0), r"`groups` must be a positive int.*Received: groups=2\.0"),
    (dict(units=4, use_bias="yes"), "`use_bias` must be a bool. Received: use_bias='yes'"),
])
def test_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        GroupLinear(**kwargs)
