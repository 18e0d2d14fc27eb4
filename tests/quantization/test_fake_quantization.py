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
from keras_subembed.quantization.recipes import ATTENTION_OUTPUT_SCOPE
from keras_subembed.quantization.weight_recipe import WeightRecipe
from tests.models.families.test_compressed_text_embedder import SIZES
from tests.models.families.test_compressed_text_embedder import SUB
from tests.models.families.test_compressed_text_embedder import VOCABULARY
from tests.models.families.test_compressed_text_embedder import make_bert_embedder

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
    # One transformer layer: every kind of kernel the recipes round is in it, and
    # tracing the rounded (16 clips per kernel) train step grows with the layers.
    keras.utils.set_random_seed(seed)
    teacher = keras_hub.models.BertBackbone(
        90, num_layers=1, num_heads=2, hidden_dim=32, intermediate_dim=64,
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


def query_kernel(student):
    return student.get_layer("transformer_layer_0")._self_attention_layer._query_dense._kernel


@pytest.fixture(scope="module")
def distilled_through_int4():
    """One quantization-aware distillation, shared by the two tests below: what the
    student computes before it, then 2 epochs of 8 steps (on JAX the rounded train step
    compiles for tens of seconds: once, not once per test).

    Returns the student, the sentence vectors of a probe batch before training (the
    plain distiller inside `fake_quantized`, the quantizing distiller, the plain one),
    the query kernel before training, the distiller and its history.
    """
    teacher, student = make_pair()
    distiller = EmbeddingDistiller(teacher, student, quantize_transformer=RECIPE)
    plain = EmbeddingDistiller(teacher, student)
    probe = token_batches(8, seed=3)
    with fake_quantized(student, RECIPE):
        want = student_sentence(plain, probe)
    vectors = {"fake_quantized": want, "quantizing": student_sentence(distiller, probe),
               "plain": student_sentence(plain, probe)}
    before = keras.ops.convert_to_numpy(query_kernel(student)).copy()
    distiller.compile(learning_rate=1e-3, embedding_learning_rate=2e-3)
    history = distiller.fit(token_batches(256), batch_size=32, epochs=2, verbose=0).history
    return dict(student=student, vectors=vectors, before=before, distiller=distiller,
                history=history)


def test_quantization_aware_distillation_trains_the_float_kernels_through_int4(
        tmp_path, distilled_through_int4):
    run = distilled_through_int4
    student, vectors = run["student"], run["vectors"]
    # Every transformer kernel (q, k, v, attention output, two feed-forward) of
    # the layer, and the pooler: every Dense outside the token embedding.
    assert len(quantized_layers(student, RECIPE)) == 7
    # The distiller sees the rounded kernels; the plain one the float kernels.
    np.testing.assert_allclose(vectors["quantizing"], vectors["fake_quantized"], atol=1e-5)
    assert not np.allclose(vectors["plain"], vectors["fake_quantized"], atol=1e-4)

    history = run["history"]
    assert history["loss"][-1] < history["loss"][0], history["loss"]
    after = keras.ops.convert_to_numpy(query_kernel(student))
    # The float kernel moved, and by less than one int4 step in most places
    # (the straight-through gradient, not a projection onto the grid).
    assert not np.allclose(after, run["before"])
    assert not np.allclose(after, reference_round(after, RECIPES[RECIPE].rounding, (0,)), atol=1e-6)
    # The student itself is plain and float; it saves and loads as such.
    assert all(type(layer).__module__.startswith("keras") for layer in student._flatten_layers())
    path = tmp_path / "student.keras"
    student.save(path)
    loaded = keras.saving.load_model(path)
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(query_kernel(loaded)), after)
    config = run["distiller"].get_config()
    assert config["quantize_transformer"] == RECIPE
    assert EmbeddingDistiller.from_config(config).quantize_transformer == RECIPE


def test_the_trained_student_matches_its_int4_file(tmp_path, distilled_through_int4):
    """Fake-quantized forward on this backend == the exported int4 file (exported in
    a TensorFlow process on JAX), for the student distilled through int4 above."""
    from ai_edge_litert.interpreter import Interpreter

    from keras_subembed.export import export_tflite

    student = distilled_through_int4["student"]
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


@pytest.fixture(scope="module")
def small_embedder():
    """`make_bert_embedder`'s with one transformer layer: each block entered and
    left retraces `predict` / `encode_text`, and a trace grows with the layers."""
    keras.utils.set_random_seed(3)
    backbone = keras_hub.models.BertBackbone(len(VOCABULARY), **{**SIZES, "num_layers": 1})
    preprocessor = keras_hub.models.BertTextEmbedderPreprocessor(
        keras_hub.models.BertTokenizer(vocabulary=VOCABULARY), sequence_length=12)
    return keras_subembed.compress(
        keras_hub.models.BertTextEmbedder(backbone, preprocessor, pooling_mode="mean"),
        "sub", SUB)


def eager_vectors(embedder, texts, recipe=None):
    """What `embedder` computes eagerly (the reference: eager calls never go stale)."""
    inputs = embedder.preprocessor(texts)
    if recipe is None:
        return keras.ops.convert_to_numpy(embedder(inputs))
    with fake_quantized(embedder, recipe):
        return keras.ops.convert_to_numpy(embedder(inputs))


def test_predict_and_encode_text_follow_the_block_whatever_was_traced_first(small_embedder):
    """`predict` and `encode_text` trace once and reuse the trace: the block must not
    get the float function traced before it, nor leave its int4 one behind."""
    texts = ["the police said the road was closed", "rain in the city"]
    float_want = eager_vectors(small_embedder, texts)
    int4_want = eager_vectors(small_embedder, texts, "int4_dynamic")
    assert not np.allclose(float_want, int4_want, atol=1e-4)
    np.testing.assert_allclose(small_embedder.predict(texts, verbose=0), float_want, atol=1e-5)
    with fake_quantized(small_embedder, "int4_dynamic"):
        np.testing.assert_allclose(small_embedder.predict(texts, verbose=0), int4_want, atol=1e-5)
        np.testing.assert_allclose(small_embedder.encode_text(texts, verbose=0), int4_want,
                                   atol=1e-5)
    np.testing.assert_allclose(small_embedder.encode_text(texts, verbose=0), float_want,
                               atol=1e-5)
    with fake_quantized(small_embedder.backbone, "int4_dynamic"):  # the README's example
        np.testing.assert_allclose(small_embedder.predict(texts, verbose=0), int4_want,
                                   atol=1e-5)


def test_a_nested_block_applies_its_own_recipe_and_restores_the_outer_one(small_embedder):
    texts = ["rain in the city"]
    want = {recipe: eager_vectors(small_embedder, texts, recipe)
            for recipe in ("int4_dynamic", "int8_weight_only")}
    assert not np.allclose(want["int4_dynamic"], want["int8_weight_only"], atol=1e-4)
    inputs = small_embedder.preprocessor(texts)
    with fake_quantized(small_embedder, "int4_dynamic"):
        with fake_quantized(small_embedder, "int8_weight_only"):
            np.testing.assert_allclose(
                keras.ops.convert_to_numpy(small_embedder(inputs)), want["int8_weight_only"],
                atol=1e-6)
        np.testing.assert_allclose(keras.ops.convert_to_numpy(small_embedder(inputs)),
                                   want["int4_dynamic"], atol=1e-6)
    assert all(type(layer).__module__.startswith("keras")
               for layer in small_embedder._flatten_layers())


def test_a_layer_built_inside_the_block_is_rounded_on_its_first_call():
    x = np.random.default_rng(2).normal(size=(4, 32)).astype("float32")
    keras.utils.set_random_seed(0)
    dense = keras.layers.Dense(16)
    model = keras.Sequential([dense])
    with fake_quantized(model, RECIPE):
        first = keras.ops.convert_to_numpy(model(x))  # builds the Dense
        again = keras.ops.convert_to_numpy(model(x))
    kernel = keras.ops.convert_to_numpy(dense._kernel)
    rounded = reference_round(kernel, RECIPES[RECIPE].rounding, (0,))
    np.testing.assert_allclose(first, x @ rounded + keras.ops.convert_to_numpy(dense.bias),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(first, again)
    assert type(dense) is keras.layers.Dense


@pytest.mark.parametrize("kwargs, message", [
    ({"bits": 1}, r"`bits` must be an integer from 2 to 8\. Received: bits=1"),
    ({"bits": True}, r"`bits` must be an integer from 2 to 8\. Received: bits=True"),
    ({"bits": 0}, r"`bits` must be an integer from 2 to 8\. Received: bits=0"),
    ({"bits": 4.5}, r"`bits` must be an integer from 2 to 8\. Received: bits=4\.5"),
    ({"bits": "4"}, r"`bits` must be an integer from 2 to 8\. Received: bits='4'"),
    ({"bits": 4, "block_size": 0}, r"`block_size` must be a positive integer or None\. "
                                   r"Received: block_size=0"),
    ({"bits": 4, "block_size": 32.0}, r"`block_size` must be a positive integer or None\. "
                                      r"Received: block_size=32\.0"),
    ({"bits": 4, "block_size": True}, r"`block_size` must be a positive integer or None\. "
                                      r"Received: block_size=True"),
    ({"bits": 4, "clipping": None}, r"`clipping` must be one of \('max', 'mse'\)\. "
                                    r"Received: clipping=None"),
])
def test_kernel_rounding_refuses_bad_arguments_by_name(kwargs, message):
    with pytest.raises(ValueError, match=message):
        KernelRounding(**kwargs)


def test_kernel_rounding_keeps_valid_arguments_as_plain_ints():
    rounding = KernelRounding(np.int64(4), np.int32(32))
    assert (type(rounding.bits), type(rounding.block_size)) == (int, int)
    assert rounding == INT4_BLOCK32.__class__(4, 32)
    # 2 bits is the smallest grid with a nonzero level: finite, on {-s, 0, s}.
    kernel = np.random.default_rng(0).normal(size=(8, 4)).astype("float32")
    got = keras.ops.convert_to_numpy(round_kernel(kernel, KernelRounding(2)))
    assert np.isfinite(got).all() and all(len(np.unique(c)) <= 3 for c in got.T)


@pytest.mark.parametrize("kwargs, message", [
    ({"name": 4}, r"`name` must be a non-empty string\. Received: name=4"),
    ({"name": ""}, r"`name` must be a non-empty string\. Received: name=''"),
    ({"rounding": 4}, r"`rounding` must be a KernelRounding\. Received: rounding=4"),
    ({"activations": "int8"}, r"`activations` must be \"dynamic\" or \"float\"\. "
                              r"Received: activations='int8'"),
    ({"overrides": ("attention", INT4)}, r"`overrides` must be a tuple of \(scope regex, "
                                         r"KernelRounding\) pairs\. Received: overrides="),
    ({"overrides": (("(", INT4),)}, r"`overrides` holds the scope '\(', not a regular "
                                    r"expression"),
    ({"table_bits": 4}, r"`table_bits` must be 8 or None\. Received: table_bits=4"),
    ({"table_bits": 8.0}, r"`table_bits` must be 8 or None\. Received: table_bits=8\.0"),
    ({"description": None}, r"`description` must be a string\. Received: description=None"),
])
def test_weight_recipe_refuses_bad_arguments_by_name(kwargs, message):
    arguments = {"name": "mine", "rounding": INT4, "activations": "dynamic", **kwargs}
    with pytest.raises(ValueError, match=message):
        WeightRecipe(**arguments)


def test_the_distiller_trains_with_a_recipe_of_ones_own_and_saves_it():
    teacher, student = make_pair()
    mine = WeightRecipe("int4_min_max", KernelRounding(4), "dynamic", table_bits=8,
                        overrides=((ATTENTION_OUTPUT_SCOPE, KernelRounding(8)),))
    distiller = EmbeddingDistiller(teacher, student, quantize_transformer=mine)
    probe = token_batches(4, seed=3)
    plain = EmbeddingDistiller(teacher, student)
    with fake_quantized(student, mine):
        want = student_sentence(plain, probe)
    np.testing.assert_allclose(student_sentence(distiller, probe), want, atol=1e-5)
    distiller.compile(learning_rate=1e-3)
    history = distiller.fit(token_batches(32), batch_size=16, epochs=1, verbose=0).history
    assert np.isfinite(history["loss"]).all()
    config = distiller.get_config()
    assert config["quantize_transformer"]["name"] == "int4_min_max"
    assert EmbeddingDistiller.from_config(config).quantize_transformer == mine
    # A table recipe given as an object is kept by name, as its name is.
    same = EmbeddingDistiller(teacher, student, quantize_transformer=RECIPES[RECIPE])
    assert same.quantize_transformer == RECIPE
