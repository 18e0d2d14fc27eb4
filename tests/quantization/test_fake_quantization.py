"""Fake-quantized transformer kernels: the rounding, straight-through training on
TensorFlow and JAX, and parity with the exported int4 file."""

import dataclasses

import keras
import keras_hub
import numpy as np
import pytest

import keras_subembed
from keras_subembed.models import EmbeddingDistiller
from keras_subembed.models import compress_backbone
from keras_subembed.quantization.kernel_rounding import CLIP_RATIOS
from keras_subembed.quantization.recipes import INT4
from keras_subembed.quantization.recipes import INT4_BLOCK32
from keras_subembed.quantization.kernel_rounding import KernelRounding
from keras_subembed.quantization.recipes import RECIPES
from keras_subembed.quantization.fake_quantization import fake_quantized
from keras_subembed.quantization.fake_quantization import quantized_layers
from keras_subembed.quantization.kernel_rounding import round_kernel
from tests.models.test_compressed_text_embedder import SUB
from tests.models.test_compressed_text_embedder import make_bert_embedder

BACKEND = keras.backend.backend()
RECIPE = "int4_blockwise32_dynamic"


def reference_round(kernel, rounding, axes):
    """ai-edge-quantizer's symmetric rounding, one channel / block at a time, on the
    clip (a `CLIP_RATIOS` fraction of the largest |w|) with the least squared error."""
    outputs = [a for a in range(kernel.ndim) if a not in axes]
    matrix = np.transpose(kernel, list(axes) + outputs).reshape(-1, int(np.prod(
        [kernel.shape[a] for a in outputs])))
    result = np.empty_like(matrix)
    qmax = 2 ** (rounding.bits - 1) - 1
    block = rounding.block_size or matrix.shape[0]
    ratios = CLIP_RATIOS if rounding.clipping == "mse" else (1.0,)
    for column in range(matrix.shape[1]):
        for start in range(0, matrix.shape[0], block):
            values = matrix[start:start + block, column]
            candidates = []
            for ratio in ratios:
                scale = max(np.float32(np.abs(values).max() * ratio), 1e-9) / qmax
                if rounding.block_size:
                    import ml_dtypes
                    scale = float(np.float32(scale).astype(ml_dtypes.bfloat16))
                rounded = np.clip(np.rint(values / scale), -qmax, qmax) * scale
                candidates.append((float(np.sum((rounded - values) ** 2)), rounded))
            # The first of equally good clips, as `round_kernel`.
            result[start:start + block, column] = min(
                candidates, key=lambda c: c[0])[1]
    shape = [kernel.shape[a] for a in list(axes) + outputs]
    order = list(axes) + outputs
    return np.transpose(result.reshape(shape), [order.index(a) for a in range(kernel.ndim)])


MIN_MAX_INT4 = KernelRounding(4, clipping="max")


@pytest.mark.parametrize("rounding", [MIN_MAX_INT4, INT4, INT4_BLOCK32],
                         ids=["channelwise-max", "channelwise-mse", "blockwise32-mse"])
@pytest.mark.parametrize("shape, axes", [((64, 48), (0,)), ((2, 32, 24), (0, 1)), ((64, 2, 8), (0,))])
def test_rounding_matches_the_reference_and_lies_on_the_int4_grid(rounding, shape, axes):
    kernel = np.random.default_rng(0).normal(size=shape).astype("float32")
    kernel[..., 0] = 0.0  # an all-zero channel stays zero
    got = keras.ops.convert_to_numpy(round_kernel(kernel, rounding, axes))
    want = reference_round(kernel, rounding, axes)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert not np.allclose(got, kernel, atol=1e-3)
    np.testing.assert_array_equal(got[..., 0], 0.0)
    # Each channel (channelwise) holds at most 15 distinct levels.
    if rounding.block_size is None:
        outputs = [a for a in range(len(shape)) if a not in axes]
        columns = np.transpose(got, list(axes) + outputs).reshape(
            int(np.prod([shape[a] for a in axes])), -1).T
        assert max(len(np.unique(c)) for c in columns) <= 15
    # What the export relies on: min-max rounding (the file's quantizer) of
    # the rounded kernel keeps it, clipped grid and all.
    again = round_kernel(got, dataclasses.replace(rounding, clipping="max"), axes)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(again), got, rtol=1e-6, atol=1e-7)


def test_mse_clipping_rounds_closer_than_min_max():
    # Gaussian weights: the largest few set a coarse min-max grid for all others.
    kernel = np.random.default_rng(3).normal(size=(384, 96)).astype("float32")
    error = {rounding.clipping: float(np.sum(
        (keras.ops.convert_to_numpy(round_kernel(kernel, rounding)) - kernel) ** 2))
        for rounding in (MIN_MAX_INT4, INT4)}
    assert error["mse"] < 0.8 * error["max"], error


def test_an_unknown_clipping_is_named():
    with pytest.raises(ValueError, match=r"`clipping` must be one of \('max', 'mse'\)\. "
                       r"Received: clipping='p99'"):
        KernelRounding(4, clipping="p99")


def test_a_block_size_that_does_not_divide_the_inputs_is_named():
    with pytest.raises(ValueError, match=r"shape \(40, 8\) has 40 input rows, not a multiple of the block size 32"):
        round_kernel(np.ones((40, 8), "float32"), INT4_BLOCK32)


def gradient_of_sum_of_squares(layer, x):
    """d/d kernel of sum(layer(x)^2), on the current backend."""
    if BACKEND == "tensorflow":
        import tensorflow as tf

        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(layer(x)))
        return tape.gradient(loss, layer._kernel.value).numpy()
    import jax

    def loss(kernel):
        outputs, _ = layer.stateless_call([kernel, layer.bias.value], [], x)
        return jax.numpy.sum(outputs ** 2)

    return np.asarray(jax.grad(loss)(layer._kernel.value))


def test_fake_quantized_forward_is_rounded_and_the_gradient_passes_straight_through():
    keras.utils.set_random_seed(0)
    with keras.name_scope("transformer_layer_0"):
        dense = keras.layers.Dense(16, name="feedforward_output_dense")
        dense.build((None, 32))
    assert dense._kernel.path == "transformer_layer_0/feedforward_output_dense/kernel"
    x = np.random.default_rng(2).normal(size=(4, 32)).astype("float32")
    kernel = keras.ops.convert_to_numpy(dense.kernel)
    rounded = reference_round(kernel, RECIPES[RECIPE].rounding, (0,))
    float_output = keras.ops.convert_to_numpy(dense(x))
    with fake_quantized(dense, RECIPE):
        output = keras.ops.convert_to_numpy(dense(x))
        grad = gradient_of_sum_of_squares(dense, x)
    np.testing.assert_allclose(output, x @ rounded + keras.ops.convert_to_numpy(dense.bias),
                               rtol=1e-5, atol=1e-5)
    # Straight through: the gradient of the rounded kernel, given to the float one.
    np.testing.assert_allclose(grad, x.T @ (2 * output), rtol=1e-4, atol=1e-4)
    # Outside the block the layer is a plain Dense again.
    assert type(dense) is keras.layers.Dense and dense._fake_quant is None
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(dense(x)), float_output)


def make_pair(seed=0):
    keras.utils.set_random_seed(seed)
    teacher = keras_hub.models.BertBackbone(
        90, num_layers=2, num_heads=2, hidden_dim=32, intermediate_dim=64,
        max_sequence_length=16, dropout=0.0)
    student = compress_backbone(teacher, "sub", {
        "assignment": "product", "num_tables": 4, "rows_per_table": 16, "reserved_ids": [0, 1, 2, 3, 4]})
    return teacher, student


def token_batches(count, length=10, seed=0):
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(5, 90, (count, length)).astype("int32")
    padding_mask = (np.arange(length) < rng.integers(3, length + 1, (count, 1))).astype("int32")
    return {"token_ids": token_ids * padding_mask, "padding_mask": padding_mask}


def student_sentence(distiller, batch):
    return keras.ops.convert_to_numpy(distiller(batch)["student_sentence"])


def test_quantization_aware_distillation_trains_the_float_kernels_through_int4(tmp_path):
    teacher, student = make_pair()
    # Every transformer kernel (q, k, v, attention output, two feed-forward) of
    # both layers, and the pooler: every Dense outside the token embedding.
    assert len(quantized_layers(student, RECIPE)) == 13
    distiller = EmbeddingDistiller(teacher, student, quantize_transformer=RECIPE)
    plain = EmbeddingDistiller(teacher, student)
    probe = token_batches(8, seed=3)
    with fake_quantized(student, RECIPE):
        want = student_sentence(plain, probe)
    # The distiller sees the rounded kernels; the plain one the float kernels.
    np.testing.assert_allclose(student_sentence(distiller, probe), want, atol=1e-5)
    assert not np.allclose(student_sentence(plain, probe), want, atol=1e-4)

    kernel = student.get_layer("transformer_layer_0")._self_attention_layer._query_dense._kernel
    before = keras.ops.convert_to_numpy(kernel).copy()
    distiller.compile(learning_rate=1e-3, embedding_learning_rate=2e-3)
    history = distiller.fit(token_batches(256), batch_size=32, epochs=3, verbose=0).history
    assert history["loss"][-1] < history["loss"][0], history["loss"]
    after = keras.ops.convert_to_numpy(kernel)
    # The float kernel moved, and by less than one int4 step in most places
    # (the straight-through gradient, not a projection onto the grid).
    assert not np.allclose(after, before)
    assert not np.allclose(after, reference_round(after, RECIPES[RECIPE].rounding, (0,)), atol=1e-6)
    # The student itself is plain and float; it saves and loads as such.
    assert all(type(layer).__module__.startswith("keras") for layer in student._flatten_layers())
    path = tmp_path / "student.keras"
    student.save(path)
    loaded = keras.saving.load_model(path)
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(loaded.get_layer("transformer_layer_0")
                                   ._self_attention_layer._query_dense._kernel), after)
    config = distiller.get_config()
    assert config["quantize_transformer"] == RECIPE
    assert EmbeddingDistiller.from_config(config).quantize_transformer == RECIPE


def test_the_trained_student_matches_its_int4_file(tmp_path):
    """Fake-quantized forward on this backend == the exported int4 file (exported in
    a TensorFlow process on JAX)."""
    from ai_edge_litert.interpreter import Interpreter

    from keras_subembed.export import export_tflite

    teacher, student = make_pair()
    distiller = EmbeddingDistiller(teacher, student, quantize_transformer=RECIPE)
    distiller.compile(learning_rate=1e-3)
    distiller.fit(token_batches(64), batch_size=32, epochs=1, verbose=0)
    student.save(tmp_path / "student.keras")
    report = export_tflite(tmp_path / "student.keras", tmp_path / "student.tflite",
                           quantization=RECIPE, sequence_lengths=(16,))
    batch = token_batches(4, seed=5)
    inputs = {**batch, "segment_ids": np.zeros_like(batch["token_ids"])}
    runner = Interpreter(model_path=str(tmp_path / "student.tflite")).get_signature_runner()
    got = runner(**inputs)["sequence_output"]
    with fake_quantized(student, RECIPE):
        want = keras.ops.convert_to_numpy(student(inputs)["sequence_output"])
    float_error = np.abs(keras.ops.convert_to_numpy(student(inputs)["sequence_output"]) - got).max()
    # Dynamic recipes also round activations to int8 at run time: a small
    # error beside the weights' own (the float model is 10x farther).
    error = np.abs(got - want).max()
    assert error < 0.1 * float_error and error < 0.05, (error, float_error)
    assert report.max_abs_error <= report.tolerance


def test_an_unknown_recipe_is_named_with_the_valid_ones():
    teacher, student = make_pair()
    with pytest.raises(ValueError, match=r"`quantize_transformer` must be one of the weight "
                       r"quantization recipes int4_blockwise32_dynamic, .*"
                       r"Received: quantize_transformer='int3'"):
        EmbeddingDistiller(teacher, student, quantize_transformer="int3")
    assert set(RECIPES) >= {"int8_weight_only", "int4_weight_only", "int4_dynamic", RECIPE}


def kernels(model):
    return [keras.ops.convert_to_numpy(layer._kernel).copy()
            for layer, _ in quantized_layers(model, RECIPE)]


def test_saving_inside_fake_quantized_writes_the_float_kernels(tmp_path):
    """`.keras`, `.weights.h5` and presets written inside the block hold the float
    kernels, as its docstring promises (Keras saves `layer.kernel`)."""
    _, student = make_pair()
    embedder = keras_subembed.compress(make_bert_embedder(), "sub", SUB)
    want_student, want_embedder = kernels(student), kernels(embedder)
    with fake_quantized(student, RECIPE), fake_quantized(embedder, "int4_dynamic"):
        student.save(tmp_path / "student.keras")
        student.save_weights(tmp_path / "student.weights.h5")
        embedder.save_to_preset(str(tmp_path / "preset"))
    loaded = keras.saving.load_model(tmp_path / "student.keras")
    _, other = make_pair(seed=1)
    other.load_weights(tmp_path / "student.weights.h5")
    preset = keras_hub.models.TextEmbedder.from_preset(str(tmp_path / "preset"))
    for model, want in ((loaded, want_student), (other, want_student), (preset, want_embedder)):
        got = kernels(model)
        assert len(got) == len(want) > 0
        for got_kernel, want_kernel in zip(got, want):
            np.testing.assert_array_equal(got_kernel, want_kernel)
