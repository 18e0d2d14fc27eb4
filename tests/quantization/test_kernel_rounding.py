"""`KernelRounding`, `reduced_axes` and `round_kernel` on small kernels worked by hand.
(The rounding against a reference, its arguments and gradients:
tests/quantization/test_fake_quantization.py.)"""

import keras
import numpy as np

from keras_subembed.quantization.kernel_rounding import KernelRounding
from keras_subembed.quantization.kernel_rounding import fake_quantize
from keras_subembed.quantization.kernel_rounding import reduced_axes
from keras_subembed.quantization.kernel_rounding import round_kernel


def test_the_input_axes_of_a_kernel_are_those_the_product_sums_over():
    assert reduced_axes(keras.layers.Dense(4)) == (0,)
    # keras-hub's attention: query kernel (d, heads, head_dim), output kernel (heads, head_dim, d).
    query = keras.layers.EinsumDense("abc,cde->abde", output_shape=(None, 2, 4))
    output = keras.layers.EinsumDense("abcd,cde->abe", output_shape=(None, 8))
    assert reduced_axes(query) == (0,) and reduced_axes(output) == (0, 1)


def test_a_channel_is_rounded_to_its_own_symmetric_grid():
    # 3 bits: levels -3..3 of s = max|w| / 3 per output column.
    kernel = np.array([[1.0, -0.5], [0.5, 0.2], [-0.25, 0.1]], "float32")
    got = keras.ops.convert_to_numpy(round_kernel(kernel, KernelRounding(3)))
    # Column 0, s = 1/3: w/s = 3, 1.5, -0.75 -> 3, 2 (half to even), -1.
    np.testing.assert_allclose(got[:, 0], [1.0, 2 / 3, -1 / 3], rtol=1e-6)
    # Column 1, s = 0.5/3: w/s = -3, 1.2, 0.6 -> -3, 1, 1.
    np.testing.assert_allclose(got[:, 1], [-0.5, 0.5 / 3, 0.5 / 3], rtol=1e-6)
    forward = keras.ops.convert_to_numpy(fake_quantize(kernel, KernelRounding(3)))
    np.testing.assert_allclose(forward, got, rtol=1e-6)


def test_blocks_run_along_the_flattened_input_axes():
    # Two blocks of 2 input rows in one output channel: each block its own scale.
    kernel = np.array([[4.0], [1.0], [0.1], [0.05]], "float32")
    blockwise = keras.ops.convert_to_numpy(round_kernel(kernel, KernelRounding(2, block_size=2)))
    channelwise = keras.ops.convert_to_numpy(round_kernel(kernel, KernelRounding(2)))
    # 2 bits: levels -1, 0, 1 of s = max|w| per block (a bfloat16 scale: 4.0 and 0.1 rounded).
    np.testing.assert_allclose(blockwise[:, 0], [4.0, 0.0, 0.1, 0.0], rtol=1e-2)
    np.testing.assert_array_equal(channelwise[:, 0], [4.0, 0.0, 0.0, 0.0])
    assert KernelRounding(4, 32).granularity == "blockwise32"
    assert KernelRounding(4).granularity == "channelwise"
