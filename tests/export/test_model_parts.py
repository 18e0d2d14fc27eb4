"""What export finds inside a model: the model itself (a live one or a `.keras` file), its
embedding mode, its limits and the metadata a runner follows."""

import zipfile

import keras
import keras_hub
import numpy as np
import pytest

from keras_subembed.export import model_parts
from keras_subembed.export.model_parts import with_embedding_mode
from keras_subembed.layers import SubEmbedding
from tests.export.conftest import masked_lm


@pytest.mark.tensorflow_only(reason="export to SavedModel / TFLite")
def test_frozen_mode_follows_the_layer_class_attribute(monkeypatch):
    mlm = masked_lm("sub", 60, num_tables=2)
    assert with_embedding_mode(mlm, "frozen") is mlm  # SubEmbedding: freezing gains nothing
    monkeypatch.setattr(SubEmbedding, "freeze_speeds_up", True, raising=False)
    frozen = with_embedding_mode(mlm, "frozen")
    assert frozen is not mlm and frozen.backbone.token_embedding.cached
    assert not mlm.backbone.token_embedding.cached


def pooled_table(vocabulary_size=20):
    token_ids = keras.Input((None,), dtype="int32", name="token_ids")
    vectors = keras.layers.Embedding(vocabulary_size, 4, name="tokens")(token_ids)
    return keras.Model(token_ids, keras.layers.GlobalAveragePooling1D()(vectors))


def test_a_model_is_live_or_a_keras_file_that_exists(tmp_path):
    model = pooled_table()
    assert model_parts.model_path(model) is None and model_parts.load_model(model) is model
    path = tmp_path / "m.keras"
    model.save(path)
    assert model_parts.model_path(str(path)) == path
    loaded = model_parts.load_model(path)
    np.testing.assert_array_equal(loaded.get_layer("tokens").get_weights()[0],
                                  model.get_layer("tokens").get_weights()[0])
    with pytest.raises(TypeError, match=r"`model` must be a keras\.Model or a path to a \.keras "
                                        r"file\. Received: 3"):
        model_parts.model_path(3)
    with pytest.raises(FileNotFoundError, match=r"No model file at `model='.*missing\.keras'`"):
        model_parts.model_path(tmp_path / "missing.keras")


def test_a_file_that_is_not_a_whole_keras_archive_is_named(tmp_path):
    truncated = tmp_path / "cut.keras"
    truncated.write_bytes(b"PK\x03\x04 half of an archive")
    with pytest.raises(ValueError, match=r"Could not read a Keras model from '.*cut\.keras': it is "
                                         r"not a complete \.keras \(zip\) file"):
        model_parts.load_model(truncated)
    foreign = tmp_path / "notes.keras"
    with zipfile.ZipFile(foreign, "w") as archive:
        archive.writestr("notes.txt", "not a model")
    with pytest.raises(ValueError, match=r"Could not read a Keras model from '.*notes\.keras': "):
        model_parts.load_model(foreign)


def test_the_embedding_mode_is_one_of_two():
    assert model_parts.check_embedding_mode("frozen") == "frozen"
    with pytest.raises(ValueError, match=r"`embedding_mode` must be one of \('compressed', "
                                         r"'frozen'\)\. Received: embedding_mode='dense'"):
        model_parts.check_embedding_mode("dense")


class Limited(keras.layers.Layer):
    def __init__(self, max_sequence_length, **kwargs):
        super().__init__(**kwargs)
        self.max_sequence_length = max_sequence_length

    def call(self, inputs):
        return inputs


def test_the_longest_sequence_is_the_tightest_limit_inside():
    inputs = keras.Input((None, 4))
    limited = keras.Model(inputs, Limited(64)(Limited(32)(Limited(None)(inputs))))
    assert model_parts.max_sequence_length(limited) == 32
    assert model_parts.max_sequence_length(pooled_table()) is None


def test_the_metadata_holds_the_vocabulary_size_and_the_tokenizers_fingerprint():
    model = pooled_table(vocabulary_size=7)
    assert model_parts.export_metadata(model) == {"vocabulary_size": 7}
    assert model_parts.runner_tokenizer_file(model) is None
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "city"]
    model.preprocessor = type("Preprocessor", (), {"tokenizer": keras_hub.models.BertTokenizer(
        vocabulary=vocabulary, lowercase=True)})()
    kind, data = model_parts.runner_tokenizer_file(model)
    assert kind.name == "wordpiece" and data == ("\n".join(vocabulary) + "\n").encode()
    assert model_parts.export_metadata(model) == {
        "vocabulary_size": 7, "vocabulary_sha256": kind.fingerprint(model.preprocessor.tokenizer),
        "lowercase": True, "strip_accents": False}


def test_weight_shapes_are_each_weights_shape_both_ways():
    dense = keras.layers.Dense(3)
    dense.build((None, 4))
    assert model_parts.weight_shapes(dense) == {(4, 3), (3, 4), (3,)}
    assert model_parts.dense_table_bytes(None) == 0
