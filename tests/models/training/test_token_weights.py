"""`token_weights`: per-token weights from text, with the model's own tokenizer."""

import keras_hub
import numpy as np
import pytest
import tensorflow as tf

import keras_subembed
from keras_subembed.models import token_weights
from tests.models.families.test_compressed_text_embedder import SUB
from tests.models.families.test_compressed_text_embedder import VOCABULARY
from tests.models.families.test_compressed_text_embedder import make_bert_embedder

TEXTS = ["the city said the road was closed", "Rain in the city", "the naïve cafe"]


def expected_counts():
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=VOCABULARY)
    counts = np.zeros(len(VOCABULARY))
    for text in TEXTS:
        for token in np.asarray(tokenizer(text)).reshape(-1):
            counts[token] += 1
    return counts


def test_weights_are_powers_of_counts_plus_one():
    embedder = make_bert_embedder()
    counts = expected_counts()
    assert counts[VOCABULARY.index("the")] == 4 and counts[VOCABULARY.index("city")] == 2
    np.testing.assert_allclose(token_weights(embedder, TEXTS), np.sqrt(counts + 1), rtol=1e-6)
    np.testing.assert_allclose(token_weights(embedder, TEXTS, power=1), counts + 1, rtol=1e-6)
    np.testing.assert_array_equal(token_weights(embedder, TEXTS, power=0), np.ones(len(VOCABULARY)))


def test_every_door_to_the_tokenizer_and_every_kind_of_text_counts_alike():
    embedder = make_bert_embedder()
    want = token_weights(embedder, TEXTS)
    for model in (embedder.preprocessor, embedder.preprocessor.tokenizer):
        np.testing.assert_array_equal(token_weights(model, TEXTS, batch_size=2), want)
    for texts in (np.array(TEXTS), tf.data.Dataset.from_tensor_slices(TEXTS),
                  tf.data.Dataset.from_tensor_slices(TEXTS).batch(2)):
        np.testing.assert_array_equal(token_weights(embedder, texts), want)


def test_labelled_datasets_and_a_padding_tokenizer_count_the_text_alone():
    embedder = make_bert_embedder()
    want = token_weights(embedder, TEXTS)
    pairs = tf.data.Dataset.from_tensor_slices((TEXTS, [0, 1, 0]))
    for texts in (pairs, pairs.batch(2)):
        np.testing.assert_array_equal(token_weights(embedder, texts), want)
    # Built with `sequence_length`, the tokenizer pads (and truncates): its
    # padding is not a token of the text, and the long text counts in full.
    padding = keras_hub.models.BertTokenizer(vocabulary=VOCABULARY, sequence_length=4)
    np.testing.assert_array_equal(token_weights(padding, TEXTS), want)
    assert padding.sequence_length == 4
    np.testing.assert_array_equal(np.asarray(padding(TEXTS[0])).shape, (4,))


def test_compress_takes_the_weights():
    embedder = make_bert_embedder()
    weights = token_weights(embedder, TEXTS, power=1)
    weighted = keras_subembed.compress(embedder, "sub", {**SUB, "token_weights": weights})
    plain = keras_subembed.compress(embedder, "sub", SUB)
    table = np.asarray(embedder.backbone.token_embedding.embeddings)
    seen = weights > 1

    def seen_error(small):
        rebuilt = np.asarray(small.backbone.token_embedding.embedding_table())
        return float(np.mean((rebuilt[seen] - table[seen]) ** 2))

    assert seen_error(weighted) < seen_error(plain)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(model=object()), TypeError, r"`model` must be a keras-hub Task .* Received: model=<object"),
        (dict(texts="one string"), TypeError, r"`texts` must be many strings .* not one string"),
        (dict(texts=[]), TypeError, r"`texts` must be a non-empty sequence of strings"),
        (dict(texts=[1, 2]), TypeError, r"sequence of strings. Received: texts\[0\]=1 \(of type int\)"),
        (dict(texts=["a", None]), TypeError,
         r"sequence of strings. Received: texts\[1\]=None \(of type NoneType\)"),
        (dict(texts=tf.data.Dataset.from_tensor_slices({"text": ["a"]})), TypeError,
         r"`texts` must be a dataset of strings or of \(text, label\) tuples. "
         r"Received a dataset of \{'text'"),
        (dict(texts=tf.data.Dataset.range(3)), TypeError, r"`texts` must hold strings. .* int64"),
        (dict(texts=["", " "]), ValueError, r"`texts` gave no tokens"),
        (dict(power=-1), ValueError, r"`power` must be a finite number >= 0. Received: power=-1"),
        (dict(power=float("nan")), ValueError, r"Received: power=nan"),
        (dict(batch_size=0), ValueError, r"`batch_size` must be a positive integer"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, message):
    arguments = {"model": make_bert_embedder(), "texts": TEXTS, **kwargs}
    with pytest.raises(error, match=message):
        token_weights(**arguments)
