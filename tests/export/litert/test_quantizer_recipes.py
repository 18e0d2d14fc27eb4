"""ai-edge-quantizer recipes: each converts a small compressed encoder, is verified
against Keras with its weights rounded the same way, and reports what the file holds."""

import sys

import keras
import keras_hub
import numpy as np
import pytest

from keras_subembed.export import ExportVerificationError
from keras_subembed.export import export_tflite
from keras_subembed.export.litert import quantizer_recipes
from keras_subembed.quantization.recipes import RECIPE_NAMES
from keras_subembed.export.litert.flatbuffer import constant_tensors
from keras_subembed.tflite_metadata import read_metadata
from keras_subembed.export.litert.quantizer_recipes import weight_bits
from keras_subembed.layers import SubEmbedding
from keras_subembed.models import compress_backbone
from keras_subembed.quantization.recipes import RECIPES
from keras_subembed.quantization.fake_quantization import fake_quantized
from tests.tflite_utils import TFLiteRunner

pytestmark = pytest.mark.tensorflow_only(reason="it exports .tflite files")


def one_layer_encoder(**codes):
    """A 1-layer BERT with product-coded SubEmbedding (`codes` added to its
    arguments), CLS-pooled and normalised."""
    keras.utils.set_random_seed(0)
    bert = keras_hub.models.BertBackbone(
        vocabulary_size=300, num_layers=1, num_heads=2, hidden_dim=64, intermediate_dim=128,
        max_sequence_length=32)
    student = compress_backbone(bert, "sub", {
        "assignment": "product", "num_tables": 8, "rows_per_table": 16,
        "reserved_ids": [0, 1, 2, 3, 4], **codes})
    token_ids = keras.Input((None,), dtype="int32", name="token_ids")
    padding_mask = keras.Input((None,), dtype="int32", name="padding_mask")
    states = student({"token_ids": token_ids, "padding_mask": padding_mask,
                      "segment_ids": keras.ops.zeros_like(token_ids)})["sequence_output"]
    return keras.Model({"token_ids": token_ids, "padding_mask": padding_mask},
                       {"embedding": keras.ops.normalize(states[:, 0], axis=-1)})


@pytest.fixture(scope="module")
def encoder():
    """One layer holds every kind of kernel a recipe stores (q, k, v, attention
    output, two feed-forward); each recipe's export traces and converts the
    model anew, which grows with the layers."""
    return one_layer_encoder()


def samples(seed=0):
    rng = np.random.default_rng(seed)
    return [{"token_ids": rng.integers(5, 300, (3, length)).astype("int32"),
             "padding_mask": np.ones((3, length), "int32")} for length in (7, 32)]


@pytest.fixture(scope="module")
def float_file(encoder, tmp_path_factory):
    path = tmp_path_factory.mktemp("float") / "encoder.tflite"
    return export_tflite(encoder, path, sample_inputs=samples())


@pytest.mark.parametrize("recipe", RECIPE_NAMES)
def test_each_recipe_is_verified_and_reports_what_the_file_holds(recipe, encoder, float_file, tmp_path):
    path = tmp_path / f"{recipe}.tflite"
    report = export_tflite(encoder, path, quantization=recipe, sample_inputs=samples(),
                           latency_runs=3)
    flatbuffer = path.read_bytes()
    assert report.quantization == recipe and report.file_bytes == len(flatbuffer)
    assert read_metadata(flatbuffer)["written_by"] == "keras_subembed.export"
    assert report.max_abs_error <= report.tolerance and report.latency_ms > 0
    # Every transformer kernel (6 per layer) is stored with the recipe's bits.
    bits = weight_bits(flatbuffer, recipe)
    assert len(bits) == 6 and all(got == want for _, got, want in bits), bits
    want_bits = {"int8_weight_only": {8}, "int4_blockwise32_dynamic_int8_attention_output": {4, 8},
                 "int4_dynamic_int8_feedforward_output": {4, 8}}
    assert {got for _, got, _ in bits} == want_bits.get(recipe, {4})
    assert report.quantized_ops == 6  # the ops the report counts are those kernels
    # The dynamic recipes store the position table (32 x 64) as int8; the
    # product sub-tables (16 rows of 8) are too small to pay for their scales.
    table_types = {dtype for name, _, _, dtype in constant_tensors(flatbuffer, with_type=True)
                   if "position_embedding" in name}
    assert table_types == {"int8" if RECIPES[recipe].table_bits else "float32"}
    # Smaller than the float file by about the kernels' share.
    assert report.file_bytes < float_file.file_bytes * (0.6 if "int8" in recipe[:4] else 0.45)
    # The report's cosine is the file's, recomputed here against the float Keras model.
    runner = TFLiteRunner(flatbuffer)
    cosines = []
    for sample in samples():
        got = runner.runner(**sample)["embedding"]
        want = np.asarray(encoder(sample)["embedding"])
        cosines.extend(np.sum(got * want, -1) / np.linalg.norm(got, axis=-1) / np.linalg.norm(want, axis=-1))
        # The fake-quantized Keras model is the file (weight-only: to float
        # precision; dynamic: up to the activations' int8 rounding).
        with fake_quantized(encoder, recipe):
            rounded = np.asarray(encoder(sample)["embedding"])
        bound = 1e-5 if recipe.endswith("weight_only") else 2e-3
        np.testing.assert_allclose(got, rounded, atol=bound)
    np.testing.assert_allclose(report.cosine_to_float, np.mean(cosines), rtol=1e-5)
    assert 0.99 < report.cosine_to_float < 1.0


@pytest.fixture(scope="module")
def rotated_encoder():
    """The encoder with rotated product codes: a (64, 64) matmul after the lookup."""
    return one_layer_encoder(rotation=True)


@pytest.mark.parametrize("recipe", ["int4_dynamic", "int4_weight_only"])
def test_a_rotation_is_stored_with_the_tables_bits(recipe, rotated_encoder, tmp_path):
    path = tmp_path / f"{recipe}.tflite"
    report = export_tflite(rotated_encoder, path, quantization=recipe, sample_inputs=samples())
    flatbuffer = path.read_bytes()
    rotations = [(shape, size, dtype) for name, shape, size, dtype
                 in constant_tensors(flatbuffer, with_type=True)
                 if "token_embedding" in name and len(shape) == 2 and shape == (64, 64)]
    if RECIPES[recipe].table_bits:
        # int8 beside the tables, not the kernels' int4: the file counts it as a quantized op.
        assert rotations == [((64, 64), 64 * 64, "int8")]
        assert report.quantized_ops == 7
    else:
        assert rotations == [((64, 64), 64 * 64 * 4, "float32")]
        assert report.quantized_ops == 6
    runner = TFLiteRunner(flatbuffer)
    for sample in samples():
        got = runner.runner(**sample)["embedding"]
        with fake_quantized(rotated_encoder, recipe):
            rounded = np.asarray(rotated_encoder(sample)["embedding"])
        # The kernels as training rounds them; the int8 rotation moves the rest by little.
        np.testing.assert_allclose(np.sum(got * rounded, -1), 1.0, atol=1e-3)
    assert report.max_abs_error <= report.tolerance


def test_rotated_codes_with_row_scales_ship_in_int4(tmp_path):
    """`product-k30m256-rotated-scaled`'s layer: a rotation and a scale per row, both kept."""
    encoder = one_layer_encoder(rotation=True, row_scales=True)
    path = tmp_path / "scaled.tflite"
    report = export_tflite(encoder, path, quantization="int4_dynamic", sample_inputs=samples())
    stored = {(shape, dtype) for name, shape, size, dtype
              in constant_tensors(path.read_bytes(), with_type=True)
              if "token_embedding" in name}
    assert ((64, 64), "int8") in stored and report.quantized_ops == 7
    runner = TFLiteRunner(path.read_bytes())
    for sample in samples():
        with fake_quantized(encoder, "int4_dynamic"):
            rounded = np.asarray(encoder(sample)["embedding"])
        got = runner.runner(**sample)["embedding"]
        np.testing.assert_allclose(np.sum(got * rounded, -1), 1.0, atol=1e-3)
    assert report.max_abs_error <= report.tolerance


def test_a_file_with_coarser_weights_than_its_recipe_fails_verification(encoder, tmp_path, monkeypatch):
    real = quantizer_recipes.quantize_flatbuffer
    # An int8 recipe whose quantizer wrote int4 weights: the file errs far more
    # than int8 rounding explains.
    monkeypatch.setattr("keras_subembed.export.litert.conversion.quantize_flatbuffer",
                        lambda flatbuffer, recipe, ops: real(flatbuffer, "int4_dynamic"))
    path = tmp_path / "wrong.tflite"
    with pytest.raises(ExportVerificationError, match=r"tolerances\['int8_weight_only'\].*was not written"):
        export_tflite(encoder, path, quantization="int8_weight_only", sample_inputs=samples())
    assert not path.exists()


def test_a_recipe_the_quantizer_skips_is_refused(float_file, monkeypatch):
    from ai_edge_quantizer import recipe

    # A recipe the quantizer accepts but that reaches no op of the file.
    monkeypatch.setattr(quantizer_recipes, "quantizer_recipe",
                        lambda *_: [dict(rule, regex="no_such_layer")
                                   for rule in recipe.dynamic_wi4_afp32()])
    with pytest.raises(ExportVerificationError, match=r"did not apply quantization='int4_dynamic' "
                       r"to 6 weight\(s\): .*transformer_layer_0.*\(float bits, wanted 4\)"):
        quantizer_recipes.quantize_flatbuffer(open(float_file.path, "rb").read(), "int4_dynamic")


def test_an_unknown_recipe_is_named_with_the_valid_ones(encoder, tmp_path):
    with pytest.raises(ValueError, match=r"`quantization` must be one of \(None, 'dynamic', "
                       r"'float16', 'int8', .*'int4_blockwise32_dynamic'.*\)\. "
                       r"Received: quantization='int4_blockwise16'"):
        export_tflite(encoder, tmp_path / "x.tflite", quantization="int4_blockwise16")


def test_a_missing_ai_edge_quantizer_names_the_extra_before_converting(encoder, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ai_edge_quantizer", None)  # `import` raises ImportError
    monkeypatch.setattr("keras_subembed.export.litert.conversion.convert",
                        lambda *args, **kwargs: pytest.fail("converted before checking"))
    with pytest.raises(ImportError, match=r"needs `ai-edge-quantizer`: `import "
                       r"ai_edge_quantizer` failed .* Install it with "
                       r"`python -m pip install \"keras-subembed\[quantize\]\"`\."):
        export_tflite(encoder, tmp_path / "x.tflite", quantization="int4_dynamic")


def own_encoder(dense=True):
    """A user's own encoder, no `transformer_layer_<i>` anywhere: ids -> compressed
    embedding -> (two Dense layers) -> mean -> a Dense head (the file's last op)."""
    keras.utils.set_random_seed(1)
    token_ids = keras.Input((None,), dtype="int32", name="token_ids")
    padding_mask = keras.Input((None,), dtype="int32", name="padding_mask")
    x = SubEmbedding(300, 64, num_tables=4, name="token_embedding")(token_ids)
    if dense:
        x = keras.layers.Dense(128, activation="relu")(x)
        x = keras.layers.Dense(64)(x)
    x = keras.ops.mean(x, axis=1)
    if dense:
        x = keras.layers.Dense(32, name="head")(x)
    return keras.Model({"token_ids": token_ids, "padding_mask": padding_mask}, {"embedding": x})


@pytest.mark.parametrize("recipe", ["int4_dynamic", "int8_weight_only"])
def test_a_users_own_dense_layers_are_quantized_and_the_report_says_so(recipe, tmp_path):
    model = own_encoder()
    float_report = export_tflite(model, tmp_path / "float.tflite", sample_inputs=samples())
    report = export_tflite(model, tmp_path / "q.tflite", quantization=recipe,
                           sample_inputs=samples())
    flatbuffer = (tmp_path / "q.tflite").read_bytes()
    assert flatbuffer != (tmp_path / "float.tflite").read_bytes()
    # Three Dense kernels (the head's op is named only `StatefulPartitionedCall`).
    assert report.quantized_ops == 3 and float_report.quantized_ops == 0
    bits = "int4" if "int4" in recipe else "int8"
    kernel_elements = 64 * 128 + 128 * 64 + 64 * 32
    assert report.constant_bytes[bits] == kernel_elements * (4 if bits == "int4" else 8) // 8
    assert float_report.constant_bytes["float32"] >= kernel_elements * 4
    assert bits in str(report) and "3 op(s) with integer weights" in str(report)
    assert report.as_dict()["constant_bytes"][bits] > 0


def test_a_model_with_nothing_a_recipe_quantizes_is_refused_before_converting(tmp_path, monkeypatch):
    monkeypatch.setattr("keras_subembed.export.litert.conversion.convert",
                        lambda *args, **kwargs: pytest.fail("converted before checking"))
    with pytest.raises(ValueError, match=r"quantization='int4_dynamic' stores the kernels of "
                       r"Dense and EinsumDense layers .* has none outside its token embedding"):
        export_tflite(own_encoder(dense=False), tmp_path / "x.tflite", quantization="int4_dynamic")
    assert not (tmp_path / "x.tflite").exists()


def test_the_command_line_names_a_missing_extra_in_one_line_before_any_work(tmp_path, monkeypatch,
                                                                              capsys):
    from keras_subembed.export.cli import main as convert_main

    monkeypatch.setitem(sys.modules, "ai_edge_quantizer", None)
    monkeypatch.setattr("keras_subembed.export.model_parts.load_model",
                        lambda *args: pytest.fail("loaded the model before checking"))
    status = convert_main([str(tmp_path / "m.keras"), "--tflite", str(tmp_path / "m.tflite"),
                           "--quantization", "int4_dynamic"])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    assert err.startswith('error: A quantizer recipe (e.g. quantization="int4_dynamic") needs '
                          "`ai-edge-quantizer`") and len(err.strip().splitlines()) == 1
    assert err.strip().endswith('Install it with `python -m pip install "keras-subembed[quantize]"`.')


def test_a_kernel_the_converter_merges_with_batch_normalization_is_quantized(tmp_path):
    """Issue 32 item 3: the converter folds a BatchNormalization into the Dense
    kernel before it (one scale per output channel); that op matched no kernel
    by value and stayed float32 in an "int4" file. It is found and quantized."""
    keras.utils.set_random_seed(2)
    token_ids = keras.Input((None,), dtype="int32", name="token_ids")
    padding_mask = keras.Input((None,), dtype="int32", name="padding_mask")
    x = SubEmbedding(300, 64, num_tables=4, name="token_embedding")(token_ids)
    x = keras.ops.mean(keras.layers.Dense(128, activation="relu")(x), axis=1)
    norm = keras.layers.BatchNormalization(name="head_norm")
    x = norm(keras.layers.Dense(32, name="head")(x))
    norm.gamma.assign(np.linspace(-0.5, 2.0, 32))  # negative scales too
    norm.moving_variance.assign(np.linspace(0.2, 3.0, 32))
    model = keras.Model({"token_ids": token_ids, "padding_mask": padding_mask}, {"embedding": x})
    report = export_tflite(model, tmp_path / "int4.tflite", quantization="int4_dynamic",
                           sample_inputs=samples())
    assert report.quantized_ops == 2 and report.constant_bytes["int4"] == (64 * 128 + 128 * 32) // 2
    assert report.max_abs_error <= report.tolerance


def test_a_kernel_matching_no_op_fails_the_export(tmp_path, monkeypatch):
    """The guarantee behind item 3: a kernel the file would keep float fails, named."""
    from keras_subembed.export.litert import kernel_ops

    monkeypatch.setattr(kernel_ops, "_same_up_to_column_scales", lambda *args: False)
    real = kernel_ops._same_up_to_scale
    monkeypatch.setattr(kernel_ops, "_same_up_to_scale",  # no 64 x 128 kernel matches
                        lambda weight, kernel: weight.size != 64 * 128 and real(weight, kernel))
    path = tmp_path / "int4.tflite"
    with pytest.raises(ExportVerificationError, match=r"quantization='int4_dynamic': 2 of the "
                       r"model's 3 kernel\(s\) it rounds \(dense(_\d+)?/kernel, dense_\d+/kernel\) "
                       r"matched no FULLY_CONNECTED op"):
        export_tflite(own_encoder(), path, quantization="int4_dynamic", sample_inputs=samples())
    assert not path.exists()


def test_a_model_inside_a_fake_quantized_block_is_refused(tmp_path, monkeypatch):
    """Issue 32 item 4: a float file exported inside the block held the rounded
    kernels under the label float32."""
    from keras_subembed.export import export_saved_model
    from keras_subembed.export.litert import conversion

    token_ids = keras.Input((None,), dtype="int32", name="token_ids")
    vectors = keras.layers.Dense(8, name="head")(keras.layers.Embedding(20, 8)(token_ids))
    model = keras.Model(token_ids, vectors)
    monkeypatch.setattr(conversion, "convert",
                        lambda *args, **kwargs: pytest.fail("converted a rounded model"))
    with fake_quantized(model, "int4_dynamic"):
        for export_function in (export_tflite, export_saved_model):
            with pytest.raises(ValueError, match=r"`model` is inside a `fake_quantized` block: "
                               r"its layers \['head'\] compute with rounded kernels"):
                export_function(model, tmp_path / "m")
    assert not list(tmp_path.iterdir())
