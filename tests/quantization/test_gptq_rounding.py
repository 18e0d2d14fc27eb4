"""GPTQ rounding: the levels against the textbook algorithm, the recipe's grid kept
(the file stores what it leaves), its error against nearest rounding, the
calibration statistics, and the errors for bad arguments."""

import keras
import numpy as np
import pytest

from keras_subembed.quantization import gptq_round_weights
from keras_subembed.quantization import quantized_layers
from keras_subembed.quantization import round_kernel
from keras_subembed.quantization import round_weights
from keras_subembed.quantization.gptq_rounding import _gptq_levels
from keras_subembed.quantization.gptq_rounding import _input_rows
from keras_subembed.quantization.gptq_rounding import input_moments
from keras_subembed.quantization.kernel_rounding import reduced_axes
from tests.models.families.test_compressed_text_embedder import TEXTS
from tests.models.families.test_compressed_text_embedder import make_bert_embedder

INT4_NAME = "int4_dynamic"


def correlated_inputs(rows, width, seed=0, rank=6):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, rank)) @ rng.normal(size=(rank, width))
    return (x + 0.1 * rng.normal(size=x.shape)).astype("float32")


def dense_model(width=64, units=8, seed=0):
    keras.utils.set_random_seed(seed)
    return keras.Sequential([keras.Input((width,)), keras.layers.Dense(units)])


def copy_of(model):
    copy = keras.models.clone_model(model)
    copy.set_weights(model.get_weights())
    return copy


def textbook_gptq(weights, scales, hessian, qmax, damping):
    """GPTQ as its paper's Algorithm 1 before the Cholesky rewrite: the inverse
    Hessian of the rows left, updated by elimination after each row."""
    weights = weights.astype("float64").copy()
    hessian = hessian + damping * np.mean(np.diag(hessian)) * np.eye(len(hessian))
    inverse = np.linalg.inv(hessian)
    levels = np.empty_like(weights)
    for i in range(len(weights)):
        levels[i] = np.clip(np.rint(weights[i] / scales[i]), -qmax, qmax)
        error = (weights[i] - levels[i] * scales[i]) / inverse[i, i]
        weights[i + 1:] -= np.outer(inverse[i + 1:, i], error)
        inverse = inverse - np.outer(inverse[:, i], inverse[i, :]) / inverse[i, i]
    return levels


@pytest.mark.parametrize("damping", [0.01, 0.5])
def test_levels_match_the_textbook_algorithm(damping):
    rng = np.random.default_rng(1)
    weights = rng.normal(size=(24, 5))
    x = correlated_inputs(300, 24, seed=2)
    hessian = x.T.astype("float64") @ x / len(x)
    scales = np.full_like(weights, np.abs(weights).max() / 7)
    got = _gptq_levels(weights, scales, hessian, 7, damping, activation_order=False)
    np.testing.assert_array_equal(got, textbook_gptq(weights, scales, hessian, 7, damping))


def test_activation_order_is_the_textbook_algorithm_on_permuted_rows():
    rng = np.random.default_rng(3)
    weights = rng.normal(size=(16, 4))
    x = correlated_inputs(200, 16, seed=4) * np.linspace(0.1, 3, 16, dtype="float32")
    hessian = x.T.astype("float64") @ x / len(x)
    scales = np.full_like(weights, np.abs(weights).max() / 7)
    order = np.argsort(-np.diag(hessian), kind="stable")
    expected = np.empty_like(weights)
    expected[order] = textbook_gptq(weights[order], scales[order],
                                    hessian[np.ix_(order, order)], 7, 0.01)
    np.testing.assert_array_equal(_gptq_levels(weights, scales, hessian, 7, 0.01, True), expected)


@pytest.mark.parametrize("recipe", ["int4_dynamic", "int4_blockwise32_dynamic", "int8_weight_only"])
def test_kernels_stay_on_the_recipes_grid_and_beat_nearest_rounding(recipe):
    model = dense_model(width=64, units=16)
    x = correlated_inputs(512, 64, seed=5)
    y = keras.ops.convert_to_numpy(model(x))
    nearest = round_weights(copy_of(model), recipe)
    bias = model.layers[0].bias.numpy().copy()
    assert gptq_round_weights(model, recipe, [x[:200], x[200:]], verbose=False) is model
    [(layer, rounding)] = quantized_layers(model, recipe)
    kernel = layer.kernel.numpy()
    # Rounding again keeps every level: the file stores these kernels as they are
    # (to a float32 ulp: backends divide by the scale differently).
    np.testing.assert_allclose(keras.ops.convert_to_numpy(round_kernel(kernel, rounding)),
                               kernel, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(layer.bias.numpy(), bias)

    def error(m):
        return float(np.mean((keras.ops.convert_to_numpy(m(x)) - y) ** 2))

    assert error(model) < 0.3 * error(nearest)


def test_einsum_kernels_of_a_keras_hub_encoder():
    embedder = make_bert_embedder()
    float_model = copy_of(embedder)
    features = embedder.preprocessor(TEXTS * 4)
    batches = [{k: v[:6] for k, v in features.items()}, {k: v[6:] for k, v in features.items()}]
    gptq_round_weights(embedder, "int4_dynamic", batches, verbose=False)
    layers = quantized_layers(embedder, "int4_dynamic")
    assert {type(layer).__name__ for layer, _ in layers} == {"Dense", "EinsumDense"}
    for layer, rounding in layers:
        kernel = keras.ops.convert_to_numpy(layer._kernel.value)
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(round_kernel(kernel, rounding, reduced_axes(layer))), kernel,
            rtol=1e-6, atol=1e-9)
    # The hooks are gone: the layers call their classes' own `call` again.
    assert all("call" not in layer.__dict__ for layer, _ in layers)
    vectors = keras.ops.convert_to_numpy(embedder(features, training=False))
    reference = keras.ops.convert_to_numpy(float_model(features, training=False))
    assert np.min(np.sum(vectors * reference, axis=1)) > 0.9


def test_moments_of_every_layer_equal_its_recorded_inputs():
    embedder = make_bert_embedder()
    features = {k: keras.ops.convert_to_numpy(v) for k, v in embedder.preprocessor(TEXTS).items()}
    features["padding_mask"] = np.ones_like(features["padding_mask"])
    layers = [layer for layer, _ in quantized_layers(embedder, INT4_NAME)]
    recorded = {}
    for layer in layers:
        def record(inputs, *args, _layer=layer, _call=layer.call, **kwargs):
            recorded[id(_layer)] = _input_rows(_layer, keras.ops.convert_to_numpy(inputs)).copy()
            return _call(inputs, *args, **kwargs)
        layer.call = record
    embedder(features, training=False)
    for layer in layers:
        del layer.call
    moments = input_moments(embedder, layers, [features])
    for layer in layers:
        x = recorded[id(layer)].astype("float64")
        np.testing.assert_allclose(moments[id(layer)], x.T @ x / len(x), rtol=1e-4, atol=1e-6,
                                   err_msg=layer.path)


def test_padded_positions_are_left_out_of_the_statistics():
    embedder = make_bert_embedder()
    features = {k: keras.ops.convert_to_numpy(v) for k, v in embedder.preprocessor(TEXTS).items()}
    layer = quantized_layers(embedder, "int4_dynamic")[0][0]
    # A longer batch: the same texts, more padding. The moments must not change.
    padded = {k: np.pad(v, [(0, 0), (0, 5)]) for k, v in features.items()}
    moments = input_moments(embedder, [layer], [features])[id(layer)]
    np.testing.assert_allclose(input_moments(embedder, [layer], [padded])[id(layer)], moments,
                               rtol=1e-4, atol=1e-6)
    unmasked = {**padded, "padding_mask": np.ones_like(padded["padding_mask"])}
    assert not np.allclose(input_moments(embedder, [layer], [unmasked])[id(layer)], moments,
                           rtol=1e-2)


def test_tuples_and_a_tf_data_dataset_are_read_as_batches():
    tf = pytest.importorskip("tensorflow")
    model = dense_model()
    x = correlated_inputs(64, 64)
    [(layer, _)] = quantized_layers(model, INT4_NAME)
    expected = input_moments(model, [layer], [x])[id(layer)]
    dataset = tf.data.Dataset.from_tensor_slices((x, np.zeros(len(x)))).batch(16)
    np.testing.assert_allclose(input_moments(model, [layer], dataset)[id(layer)], expected,
                               rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("arguments, message", [
    (dict(damping=0), "damping=0"),
    (dict(damping=float("nan")), "damping=nan"),
    (dict(damping="0.1"), "damping='0.1'"),
    (dict(activation_order="yes"), "activation_order='yes'"),
    (dict(verbose=1.5), "verbose=1.5"),
    (dict(recipe="int3"), "recipe='int3'"),
])
def test_bad_arguments_name_the_value(arguments, message):
    model = dense_model()
    kernel = model.layers[0].kernel.numpy().copy()
    with pytest.raises((ValueError, TypeError), match=message.replace("(", r"\(")):
        gptq_round_weights(model, arguments.pop("recipe", INT4_NAME),
                           [correlated_inputs(32, 64)], **arguments)
    np.testing.assert_array_equal(model.layers[0].kernel.numpy(), kernel)


def test_no_calibration_tokens_and_no_kernels_are_refused():
    model = dense_model()
    kernel = model.layers[0].kernel.numpy().copy()
    with pytest.raises(ValueError, match="`data` gave no calibration tokens"):
        gptq_round_weights(model, INT4_NAME, [], verbose=False)
    np.testing.assert_array_equal(model.layers[0].kernel.numpy(), kernel)
    assert "call" not in model.layers[0].__dict__
    embedding_only = keras.Sequential([keras.Input((3,), dtype="int32"),
                                       keras.layers.Embedding(10, 4)])
    with pytest.raises(ValueError, match="no kernel that the recipe 'int4_dynamic' quantizes"):
        gptq_round_weights(embedding_only, INT4_NAME, [np.zeros((1, 3), "int32")])


def test_a_failing_batch_leaves_no_hook_behind():
    model = dense_model()
    with pytest.raises(Exception):
        gptq_round_weights(model, INT4_NAME, [np.zeros((2, 5), "float32")], verbose=False)
    assert "call" not in model.layers[0].__dict__
