"""Which `FULLY_CONNECTED` op holds which Keras kernel, matched by value up to the scales
the converter folds in; a kernel left float32 under a recipe's label is refused."""

import keras
import numpy as np
import pytest

from keras_subembed.export import ExportVerificationError
from keras_subembed.export.litert import kernel_ops
from keras_subembed.layers import SubEmbedding
from keras_subembed.quantization.kernel_rounding import KernelRounding
from keras_subembed.quantization.recipes import get_recipe
from tests.tflite_utils import handmade_tflite

pytest.importorskip("ai_edge_quantizer", reason="the recipes' quantizer is not installed")
RECIPE = get_recipe("int4_dynamic")


def dense_model():
    keras.utils.set_random_seed(0)
    inputs = keras.Input((4,))
    return keras.Model(inputs, keras.layers.Dense(3, name="head")(inputs))


def fully_connected_file(weight):
    """x (1, in) -> FULLY_CONNECTED with the float32 (out, in) `weight` -> (1, out)."""
    out, width = weight.shape
    return handmade_tflite([("x", (1, width), "float32", None, None),
                            ("model/head/MatMul", (out, width), "float32", weight, None),
                            ("model/head/BiasAdd", (1, out), "float32", None, None)],
                           [("FULLY_CONNECTED", (0, 1), (2,))], inputs=(0,), outputs=(2,))


def kernel_of(model):
    return keras.ops.convert_to_numpy(model.get_layer("head").kernel)


def test_a_kernel_stored_transposed_and_scaled_is_found():
    model = dense_model()
    # The converter stores (out, in), here times attention's 1/sqrt(d) folded in.
    found = kernel_ops.kernel_ops(fully_connected_file(kernel_of(model).T * 0.5), model, RECIPE)
    ((scope, layer, rounding),) = found
    assert scope == "model/head/BiasAdd;" and layer is model.get_layer("head")
    assert rounding == RECIPE.rounding


def test_a_kernel_no_op_holds_while_an_op_of_its_size_stays_float_is_refused():
    model = dense_model()
    other = np.random.default_rng(1).normal(size=(3, 4)).astype("float32")
    with pytest.raises(ExportVerificationError, match=r"quantization='int4_dynamic': 1 of the "
                       r"model's 1 kernel\(s\) it rounds \(head/kernel\) matched no "
                       r"FULLY_CONNECTED op"):
        kernel_ops.kernel_ops(fully_connected_file(other), model, RECIPE)


def test_an_op_holding_a_float_weight_of_the_model_is_not_taken_for_a_lost_kernel():
    # A rotated SubEmbedding's (d, d) matmul stays float32 by design; a kernel of its size
    # that no op holds (an unused pooler, dropped by the converter) is then no cause to refuse.
    ids = keras.Input((None,), dtype="int32")
    table = SubEmbedding(10, 4, assignment="random", seed=0, rotation=True)
    model = keras.Model(ids, table(ids))
    model.unused = keras.layers.Dense(4, name="head")  # tracked and rounded, in no output
    model.unused.build((None, 4))
    rotation = keras.ops.convert_to_numpy(table.rotation_matrix)
    assert kernel_ops.kernel_ops(fully_connected_file(rotation.T), model, RECIPE) == []
    # Any other float32 op of the kernel's size is still refused.
    other = np.random.default_rng(1).normal(size=(4, 4)).astype("float32")
    with pytest.raises(ExportVerificationError, match=r"\(head/kernel\) matched no"):
        kernel_ops.kernel_ops(fully_connected_file(other), model, RECIPE)


def test_a_rotation_is_found_by_value_and_given_the_tables_bits():
    ids = keras.Input((None,), dtype="int32")
    table = SubEmbedding(10, 4, assignment="random", seed=0, rotation=True)
    model = keras.Model(ids, table(ids))
    table.rotation_matrix.assign(np.linalg.qr(
        np.random.default_rng(3).normal(size=(4, 4)))[0].astype("float32"))
    rotation = keras.ops.convert_to_numpy(table.rotation_matrix)
    # Stored (out, in) by the converter: the values, not the layout, match.
    assert kernel_ops.rotation_ops(fully_connected_file(rotation.T), model, 8) == [
        ("model/head/BiasAdd;", KernelRounding(8))]
    other = np.random.default_rng(1).normal(size=(4, 4)).astype("float32")
    assert kernel_ops.rotation_ops(fully_connected_file(other), model, 8) == []
    # Without a rotation there is nothing to find.
    plain = keras.Model(ids, SubEmbedding(10, 4, assignment="random", seed=0)(ids))
    assert kernel_ops.rotation_ops(fully_connected_file(rotation.T), plain, 8) == []


def test_a_model_without_a_kernel_to_round_is_refused_by_name():
    ids = keras.Input((None,), dtype="int32")
    embedding_only = keras.Model(ids, keras.layers.Embedding(10, 4)(ids), name="table_only")
    with pytest.raises(ValueError, match=r"quantization='int4_dynamic' stores the kernels of Dense "
                                         r"and EinsumDense layers .* the model 'table_only' has none"):
        kernel_ops.rounded_layers(embedding_only, RECIPE)


def test_the_scales_a_converter_folds_in_are_told_from_other_values():
    kernel = np.random.default_rng(2).normal(size=(6, 3)).astype("float32")
    ordered = np.sort(kernel, axis=None)
    assert kernel_ops._same_up_to_scale(np.sort(2.5 * kernel, axis=None), ordered)
    assert not kernel_ops._same_up_to_scale(np.sort(-kernel, axis=None), ordered)
    assert not kernel_ops._same_up_to_scale(np.sort(kernel + 0.01, axis=None), ordered)
    # A following BatchNormalization: one scale per output column.
    columns = kernel.T * np.array([[0.5], [2.0], [3.0]], "float32")
    assert kernel_ops._same_up_to_column_scales(columns, kernel)
    assert not kernel_ops._same_up_to_column_scales(columns[::-1], kernel)
