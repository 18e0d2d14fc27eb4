"""The inputs a compressed encoder checks before tracing: token ids (beyond int32, outside
the vocabulary, past the positions), padding masks, sentences, input names."""

import re
import types

import keras
import keras_hub
import numpy as np
import pytest

import keras_subembed
from keras_subembed.models.encoding.encoder_inputs import backbone_inputs
from keras_subembed.models.encoding.encoder_inputs import check_id_batch
from keras_subembed.models.encoding.encoder_inputs import check_input_names
from keras_subembed.models.encoding.encoder_inputs import check_sentence_inputs
from keras_subembed.models.encoding.encoder_inputs import narrow_ids
from keras_subembed.models.encoding.encoder_inputs import sequence_output
from tests.models.tiny_encoders import tiny_backbone

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + (
    "the of to and in is was for on that with by it as at from he his said "
    "year new one two people news game team police government market world").split()


def make_encoder(pooling="mean", **kwargs):
    """A compressed BERT text embedder (what the checks of predict guard)."""
    keras.utils.set_random_seed(5)
    backbone = keras_hub.models.BertBackbone(
        len(VOCABULARY), num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=16,
        max_sequence_length=16)
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=VOCABULARY)
    preprocessor = keras_hub.models.BertTextEmbedderPreprocessor(tokenizer, sequence_length=10)
    embedder = keras_hub.models.BertTextEmbedder(backbone, preprocessor, pooling_mode=pooling)
    return keras_subembed.compress(embedder, "embedding")


# --- issue 20 item 7 and the crash list: what predict and call take ---------------------

WIDE_ID = 2**32 + 5  # Keras's int32 cast would make it token 5


def ids_batch(middle, dtype="int64"):
    return {"token_ids": np.array([[2, middle, 3]], dtype),
            "padding_mask": np.ones((1, 3), dtype)}


def test_ids_beyond_int32_are_refused_before_keras_narrows_them():
    encoder = make_encoder()
    message = re.escape("`token_ids` holds values outside int32, which the model's int32 "
                        "inputs would wrap onto other ids: [4294967301]. "
                        "Received: token_ids of dtype int64")
    with pytest.raises(ValueError, match=message):
        encoder(ids_batch(WIDE_ID))
    with pytest.raises(ValueError, match=message):
        encoder.predict(ids_batch(WIDE_ID), verbose=0)
    # In range, int64 ids give what int32 ids give.
    np.testing.assert_allclose(encoder.predict(ids_batch(5), verbose=0),
                               encoder.predict(ids_batch(5, "int32"), verbose=0),
                               rtol=1e-6)


@pytest.mark.tensorflow_only(reason="a tf.data pipeline keeps int64 ids into the traced graph")
def test_wide_ids_in_a_compiled_graph_never_become_another_token():
    import tensorflow as tf

    encoder = make_encoder()
    compressed = keras_subembed.compress(
        encoder, "sub", {"num_tables": 2, "rows_per_table": 8, "reserved_ids": [0, 1, 2, 3]})
    dataset = tf.data.Dataset.from_tensors(ids_batch(WIDE_ID))
    got = compressed.predict(dataset, verbose=0)
    out_of_range = compressed.predict(tf.data.Dataset.from_tensors(ids_batch(len(VOCABULARY))),
                                      verbose=0)
    token_5 = compressed.predict(ids_batch(5, "int32"), verbose=0)
    np.testing.assert_allclose(got, out_of_range, rtol=1e-5, atol=1e-6)
    assert not np.allclose(got, token_5, atol=1e-3)


@pytest.mark.parametrize("x, error, message", [
    ([], ValueError, "`x` holds no sentences: nothing to embed. Received: x=[]"),
    ([1, 2], TypeError, "`x` must hold sentences (strings). Received: an element 1 of type int"),
    (None, TypeError, "`x` must be a list of sentences (strings) or a dict of token ids. "
                      "Received: x=None"),
])
def test_predict_names_what_it_cannot_take(x, error, message):
    with pytest.raises(error, match=re.escape(message)):
        make_encoder().predict(x, verbose=0)


def test_predict_takes_ids_even_with_a_preprocessor():
    encoder = make_encoder()
    features = encoder.preprocessor(["the police said the news"])
    ids = {name: keras.ops.convert_to_numpy(value) for name, value in features.items()}
    np.testing.assert_allclose(encoder.predict(ids, verbose=0),
                               encoder.predict(["the police said the news"], verbose=0),
                               rtol=1e-5, atol=1e-6)


def test_predict_checks_ids_against_the_model():
    encoder = make_encoder()
    with pytest.raises(ValueError, match=re.escape(
            f"`token_ids` must be in [0, {len(VOCABULARY)}) (the vocabulary size). "
            "Received ids: [999]")):
        encoder.predict(ids_batch(999), verbose=0)
    with pytest.raises(ValueError, match=re.escape(
            "`padding_mask` must have the shape of `token_ids`. Received: "
            "padding_mask.shape=(1, 4), token_ids.shape=(1, 3)")):
        encoder.predict({"token_ids": np.array([[2, 5, 3]]),
                         "padding_mask": np.ones((1, 4), "int32")}, verbose=0)
    with pytest.raises(ValueError, match=re.escape(
            "`token_ids` has sequences of 20 tokens; the model takes at most 16")):
        encoder.predict({"token_ids": np.full((1, 20), 5), "padding_mask": np.ones((1, 20))},
                        verbose=0)


# --- the checks and conversions themselves --------------------------------------------


def test_names_a_model_does_not_take_are_refused_not_paired_by_sorted_name():
    takes = {"token_ids": None, "padding_mask": None}
    check_input_names({"token_ids": 1, "padding_mask": 1}, takes)  # nothing raised
    check_input_names(["a sentence"], takes)  # text is the preprocessor's
    with pytest.raises(ValueError, match=re.escape(
            "The model takes inputs ['padding_mask', 'token_ids']; received unknown ones "
            "['segment', 'type_ids'].")):
        check_input_names({"token_ids": 1, "padding_mask": 1, "segment": 0, "type_ids": 0},
                          takes)


def test_a_sentences_ids_fill_a_backbones_inputs_with_zero_segments():
    bert = tiny_backbone("bert")
    ids, mask = np.array([[2, 5, 3]], "int32"), np.array([[1, 1, 1]], "int32")
    values = backbone_inputs(bert, ids, mask)
    assert sorted(values) == ["padding_mask", "segment_ids", "token_ids"]
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(values["segment_ids"]), [[0, 0, 0]])
    assert sorted(backbone_inputs(tiny_backbone("xlm_roberta"), ids, mask)) == [
        "padding_mask", "token_ids"]
    with pytest.raises(ValueError, match=re.escape(
            "SimpleNamespace takes inputs ['image'] that a sentence cannot fill in; supported "
            "inputs: ('token_ids', 'padding_mask', 'segment_ids').")):
        check_sentence_inputs(types.SimpleNamespace(
            input={"token_ids": None, "padding_mask": None, "image": None}))
    with pytest.raises(ValueError, match=re.escape(
            "SimpleNamespace must take a dict with `token_ids` and `padding_mask`. "
            "Its inputs: ['token_ids']")):
        check_sentence_inputs(types.SimpleNamespace(input=["token_ids"]))


def test_the_token_states_are_found_among_a_backbones_outputs():
    states = np.ones((1, 3, 8))
    assert sequence_output(None, {"sequence_output": states, "pooled_output": 0}) is states
    assert sequence_output(None, states) is states
    with pytest.raises(ValueError, match=re.escape(
            "NoneType returns ['pooled_output']; expected a `sequence_output`.")):
        sequence_output(None, {"pooled_output": 0})


def test_fractional_ids_are_named_and_nan_ids_and_int64_masks_narrowed():
    with pytest.raises(ValueError, match=re.escape(
            "`token_ids` must hold whole-number token ids: a fractional id is not an id (it "
            "would silently be truncated to another token). Received: [5.5].")):
        narrow_ids({"token_ids": np.array([[5.0, 5.5]], "float32")})
    narrowed = narrow_ids({"token_ids": np.array([[5.0, np.nan, 6.0]], "float32"),
                           "padding_mask": np.array([[1, 1, 0]], "int64"), "other": "kept"})
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(narrowed["token_ids"]),
                                  [[5, -1, 6]])  # NaN: an id out of range, embedded as zeros
    mask = keras.ops.convert_to_numpy(narrowed["padding_mask"])
    assert mask.dtype == np.int32
    np.testing.assert_array_equal(mask, [[1, 1, 0]])
    assert narrowed["other"] == "kept"
    assert narrow_ids(["text"]) == ["text"]


@pytest.mark.parametrize("batch, message", [
    ({"token_ids": np.array([2, 5, 3])},
     "`token_ids` must be a 2-D (batch, length) array. Received shape (3,)"),
    ({"token_ids": np.zeros((0, 3), "int32")},
     "`token_ids` is empty (shape (0, 3)): there is nothing to run on."),
    ({"token_ids": np.array([[2, 5, 3]]), "padding_mask": np.array([[1, 2, 1]])},
     "`padding_mask` must hold 0 (padding) and 1 (token) only. Received values [2]"),
])
def test_an_id_batch_of_the_wrong_shape_or_mask_is_named(batch, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        check_id_batch(batch, vocabulary_size=12)
