"""Export driven by the model's own specs: any ids-and-masks model, every output checked."""

import re

import keras
import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

from keras_subembed.export import ExportVerificationError
from keras_subembed.export import export_saved_model
from keras_subembed.export import export_tflite
from keras_subembed.models import find_token_embedding
from keras_subembed.export.litert import conversion
from keras_subembed.export.tflite.tflite_format import TFLiteFormat
from keras_subembed.export.model_parts import dense_table_bytes
from keras_subembed.export.signature import ServingInputs
from keras_subembed.export.signature import make_sample_inputs
from keras_subembed.export.staged_model import StagedModel
from keras_subembed.layers import DeFINEEmbedding
from keras_subembed.layers import SubEmbedding
from tests.export.conftest import masked_lm
from tests.export.conftest import sentence_encoder


def fail_if_converted(*args, **kwargs):
    raise AssertionError("the conversion ran before the inputs were checked")


def test_sentence_encoder_exports_with_its_named_output_and_token_table(tmp_path):
    model, bert = sentence_encoder()
    report = export_tflite(model, tmp_path / "encoder.tflite")
    assert report.inputs == ("token_ids", "padding_mask")
    assert report.outputs == ("embedding",)
    assert report.max_abs_error <= report.tolerance == 1e-4  # outputs are unit vectors
    assert report.verified_sequence_lengths == (16, 32)  # capped at max_sequence_length
    assert not any(op.startswith("CUSTOM") for op in report.ops)
    # the 100 x 16 token table, not the 2 x 16 segment or 32 x 16 position table
    assert find_token_embedding(model) is bert.token_embedding
    assert report.dense_embedding_bytes == 100 * 16 * 4
    assert 100 * 16 * 4 <= report.embedding_bytes < 100 * 16 * 4 + 64

    interpreter = Interpreter(model_path=report.path)
    signature = interpreter.get_signature_list()["serving_default"]
    assert sorted(signature["inputs"]) == ["padding_mask", "token_ids"]
    assert signature["outputs"] == ["embedding"]
    ids = np.array([[2, 17, 45, 3, 0, 0]], "int32")
    mask = (ids != 0).astype("int32")
    got = interpreter.get_signature_runner()(token_ids=ids, padding_mask=mask)["embedding"]
    want = model({"token_ids": ids, "padding_mask": mask})["embedding"]
    np.testing.assert_allclose(got, want, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(got, axis=-1), 1.0, rtol=1e-5)


def test_saved_model_signature_returns_the_dict_output_names(tmp_path):
    import tensorflow as tf

    model, _ = sentence_encoder()
    signature = tf.saved_model.load(str(export_saved_model(model, tmp_path / "s")))
    signature = signature.signatures["serving_default"]
    assert list(signature.structured_outputs) == ["embedding"]
    assert sorted(signature.structured_input_signature[1]) == ["padding_mask", "token_ids"]


def two_output_model(output_scale=1.0):
    """[token_ids, mask_positions] -> [vectors, scores at the positions]."""
    keras.utils.set_random_seed(0)
    token_ids = keras.Input((None,), dtype="int32", name="token_ids")
    mask_positions = keras.Input((None,), dtype="int32", name="mask_positions")
    vectors = SubEmbedding(50, 8, num_tables=2, seed=0)(token_ids)
    gathered = keras.ops.take_along_axis(vectors, keras.ops.expand_dims(mask_positions, -1), 1)
    scores = keras.layers.Dense(3, name="scores")(gathered)
    model = keras.Model([token_ids, mask_positions], [vectors, scores * output_scale])
    return model


def test_list_inputs_and_every_output_are_verified(tmp_path):
    model = two_output_model()
    report = export_tflite(model, tmp_path / "m.tflite")
    assert report.inputs == ("token_ids", "mask_positions")
    assert report.outputs == ("outputs", "outputs_1")
    # A Keras model that differs only in its second output fails verification.
    other = two_output_model(output_scale=2.0)
    serving_inputs = ServingInputs.of(other)
    samples = make_sample_inputs(other, serving_inputs, [7])
    flatbuffer = conversion.convert(model)
    staged = StagedModel(other, serving_inputs, samples)
    with pytest.raises(ExportVerificationError, match="output 'outputs_1' differs from Keras"):
        TFLiteFormat(sample_inputs=samples).verify_file(staged, flatbuffer, "x")


def test_sequential_single_input_model(tmp_path):
    model = keras.Sequential([keras.Input((None,), dtype="int32"), keras.layers.Embedding(40, 6),
                              keras.layers.GlobalAveragePooling1D()])
    report = export_tflite(model, tmp_path / "m.tflite", latency_runs=2)
    assert len(report.inputs) == 1 and report.outputs == ("outputs",)
    assert report.verified_sequence_lengths == (16, 128) and report.latency_ms > 0
    assert report.dense_embedding_bytes == 40 * 6 * 4


class Pooler(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.embedding = keras.layers.Embedding(30, 4)

    def call(self, inputs):
        return keras.ops.mean(self.embedding(inputs["words"]), axis=1)


def test_subclassed_model_needs_sample_inputs(tmp_path, monkeypatch):
    model = Pooler()
    ids = np.array([[1, 2, 3], [4, 5, 0]], "int32")
    model({"words": ids})
    with monkeypatch.context() as patch:
        patch.setattr(conversion, "convert", fail_if_converted)
        with pytest.raises(ValueError, match="Cannot tell the inputs of Pooler.*sample_inputs"):
            export_tflite(model, tmp_path / "m.tflite")
    report = export_tflite(model, tmp_path / "m.tflite", sample_inputs=[{"words": ids}])
    assert report.inputs == ("words",) and report.verified_sequence_lengths == (3,)


def test_inputs_that_cannot_be_made_up_ask_for_sample_inputs_before_converting(
        tmp_path, monkeypatch):
    monkeypatch.setattr(conversion, "convert", fail_if_converted)
    features = keras.Input((5,), name="features")
    model = keras.Model(features, keras.layers.Dense(2)(features))
    with pytest.raises(ValueError, match=re.escape(
            "Cannot make verification inputs for 'features' (float32, shape (None, 5))")):
        export_tflite(model, tmp_path / "m.tflite")
    first = keras.Input((None,), dtype="int32", name="first_ids")
    second = keras.Input((None,), dtype="int32", name="second_ids")
    table = keras.layers.Embedding(10, 2)
    model = keras.Model([first, second], table(first) + table(second))
    with pytest.raises(ValueError, match="'first_ids'.*'second_ids'.*Pass `sample_inputs`"):
        export_tflite(model, tmp_path / "m.tflite")
    ids = keras.Input((None,), dtype="int32", name="token_ids")
    model = keras.Model(ids, keras.layers.Embedding(10, 2)(ids))
    with pytest.raises(ValueError, match=re.escape("`sample_inputs[0]['token_ids']` has shape "
                                                   "(0, 4). A .tflite file needs a batch")):
        export_tflite(model, tmp_path / "m.tflite",
                      sample_inputs=[{"token_ids": np.zeros((0, 4), "int32")}])
    with pytest.raises(ValueError, match=re.escape("`sample_inputs[0]['token_ids']` has shape "
                                                   "(2, 0)")):
        export_tflite(model, tmp_path / "m.tflite", sample_inputs=[np.zeros((2, 0), "int32")])
    with pytest.raises(ValueError, match=re.escape("`sample_inputs[0]` must be a dict with the "
                                                   "model's inputs ['token_ids']")):
        keras_model = keras.Model({"token_ids": ids}, keras.layers.Embedding(10, 2)(ids))
        export_tflite(keras_model, tmp_path / "m.tflite", sample_inputs=[{"ids": np.ones((1, 2))}])


def test_token_embedding_is_found_and_sized_in_its_dtype():
    mlm = masked_lm("define", 60, map_dim=8, expand_dim=16, depth=2)
    assert find_token_embedding(mlm) is mlm.backbone.token_embedding
    assert find_token_embedding(mlm.backbone) is mlm.backbone.token_embedding
    ids = keras.Input((None,), dtype="int32")
    define = DeFINEEmbedding(500, 8, map_dim=4, expand_dim=16, depth=2)
    positions = keras.layers.Embedding(64, 8, name="positions")
    plain = keras.Model(ids, define(ids) + positions(keras.ops.zeros_like(ids)))
    assert find_token_embedding(plain) is define  # the outer layer, not one inside it
    half = keras.layers.Embedding(1000, 8, dtype="float16")
    half.build()
    assert dense_table_bytes(half) == 1000 * 8 * 2
    assert dense_table_bytes(define) == 500 * 8 * 4


# Export (SavedModel, TFLite) is TensorFlow's; from JAX it runs in a TensorFlow process.
pytestmark = pytest.mark.tensorflow_only(reason="export to SavedModel / TFLite")
