"""The inputs a compressed encoder checks before tracing: token ids (beyond int32, outside
the vocabulary, past the positions), padding masks, sentences, input names."""

import re

import keras
import keras_hub
import numpy as np
import pytest

import keras_subembed

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
