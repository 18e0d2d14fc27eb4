"""`pretrained_embedding`: token-embedding layers that start from a pretrained table."""

import re

import keras
import keras_hub
import numpy as np
import pytest

from keras_subembed.layers import EMBEDDING_KINDS
from keras_subembed.layers import SubEmbedding
from keras_subembed.models.families.pretrained_embedding import dense_table
from keras_subembed.models.families.pretrained_embedding import pretrained_token_embedding

TABLE = np.random.default_rng(0).normal(size=(40, 8)).astype("float32")


def test_the_dense_table_of_a_keras_and_of_a_compressed_embedding():
    dense = keras.layers.Embedding(40, 8)
    dense.build((None, None))
    np.testing.assert_array_equal(dense_table(dense), keras.ops.convert_to_numpy(dense.embeddings))
    sub = SubEmbedding.from_pretrained(TABLE, num_tables=2, rows_per_table=4)
    table = dense_table(sub)
    assert table.shape == (40, 8) and isinstance(table, np.ndarray)
    np.testing.assert_array_equal(table, keras.ops.convert_to_numpy(sub.embedding_table()))


def test_embedding_is_keras_hubs_tied_embedding_holding_the_table_exactly():
    layer = pretrained_token_embedding(TABLE, "embedding", name="tokens", dtype="float32")
    assert type(layer) is keras_hub.layers.ReversibleEmbedding
    assert (layer.name, layer.input_dim, layer.output_dim) == ("tokens", 40, 8)
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(layer.embeddings), TABLE)


def test_a_short_name_takes_its_kinds_arguments():
    layer = pretrained_token_embedding(TABLE, "sub", {"num_tables": 2, "rows_per_table": 4})
    assert type(layer) is SubEmbedding
    assert (layer.input_dim, layer.output_dim, layer.num_tables) == (40, 8, 2)


def test_a_layer_is_used_as_it_is_once_its_sizes_fit():
    fits = keras.layers.Embedding(40, 8)
    assert pretrained_token_embedding(TABLE, fits) is fits
    with pytest.raises(ValueError, match=re.escape(
            "The embedding layer maps 41 ids to width 8, but the pretrained token table is "
            "40 x 8: the vocabulary and width must match the backbone's.")):
        pretrained_token_embedding(TABLE, keras.layers.Embedding(41, 8))
    with pytest.raises(ValueError, match=re.escape(
            "`embedding_kwargs` only apply when `embedding` is a short name. "
            "Received: embedding_kwargs={'num_tables': 2}")):
        pretrained_token_embedding(TABLE, fits, {"num_tables": 2})


def test_unknown_kinds_and_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match=re.escape(
            f"`embedding` must be a layer or one of {sorted(EMBEDDING_KINDS)}. "
            "Received: embedding='dense'")):
        pretrained_token_embedding(TABLE, "dense")
    with pytest.raises(ValueError, match=re.escape(
            '`embedding="embedding"` is an exact copy and takes no `embedding_kwargs`. '
            "Received: {'num_tables': 2}")):
        pretrained_token_embedding(TABLE, "embedding", {"num_tables": 2})
    with pytest.raises(TypeError, match=re.escape(
            "`embedding_kwargs` must be a dict of the embedding's arguments or None. "
            "Received: embedding_kwargs=[('num_tables', 2)]")):
        pretrained_token_embedding(TABLE, "sub", [("num_tables", 2)])
