"""`PositionalTokenEmbedding`: any token embedding (and a projection) plus learned positions."""

import keras
import keras_hub
import numpy as np
import pytest

from keras_subembed.layers import PositionalTokenEmbedding


def numpy_of(value):
    return keras.ops.convert_to_numpy(value)


def test_the_sum_of_token_rows_and_position_rows_from_a_start_index():
    layer = PositionalTokenEmbedding(keras.layers.Embedding(10, 4),
                                     keras_hub.layers.PositionEmbedding(sequence_length=8))
    ids = np.array([[3, 5, 0]], "int32")
    outputs = numpy_of(layer(ids))
    tokens = numpy_of(layer.token_embedding.embeddings)
    positions = numpy_of(layer.position_embedding.position_embeddings)
    np.testing.assert_allclose(outputs, tokens[ids] + positions[:3], rtol=1e-6)
    shifted = numpy_of(layer(ids, start_index=2))
    np.testing.assert_allclose(shifted, tokens[ids] + positions[2:5], rtol=1e-6)


def test_the_mask_is_the_token_embeddings():
    masking = PositionalTokenEmbedding(keras.layers.Embedding(10, 4, mask_zero=True),
                                       keras_hub.layers.PositionEmbedding(sequence_length=8))
    assert masking.supports_masking
    ids = np.array([[3, 5, 0]], "int32")
    assert numpy_of(masking.compute_mask(ids)).tolist() == [[True, True, False]]


def test_a_projection_widens_a_narrow_token_embedding():
    layer = PositionalTokenEmbedding(keras.layers.Embedding(100, 4),
                                     keras_hub.layers.PositionEmbedding(sequence_length=8),
                                     projection=keras.layers.Dense(6))
    ids = np.array([[1, 2], [3, 4]], "int32")
    outputs = numpy_of(layer(ids))
    assert layer.output_dim == 6 and outputs.shape == (2, 2, 6)
    projected = numpy_of(layer.projection(layer.token_embedding(ids)))
    positions = numpy_of(layer.position_embedding.position_embeddings)[:2]
    np.testing.assert_allclose(outputs, projected + positions, rtol=1e-5, atol=1e-6)


def test_the_layer_is_rebuilt_from_its_config():
    layer = PositionalTokenEmbedding(keras.layers.Embedding(10, 4),
                                     keras_hub.layers.PositionEmbedding(sequence_length=8))
    layer.build((None, None))
    copy = PositionalTokenEmbedding.from_config(layer.get_config())
    assert isinstance(copy.token_embedding, keras.layers.Embedding) and copy.projection is None
    assert copy.token_embedding.input_dim == 10 and copy.output_dim == 4
    assert copy.position_embedding.sequence_length == 8


def test_a_token_embedding_of_another_kind_is_refused():
    with pytest.raises(TypeError, match=r"`token_embedding` must be a layer of "
                                        r"keras_subembed\.layers or a keras\.layers\.Embedding\. "
                                        r"Received: token_embedding=<Dense"):
        PositionalTokenEmbedding(keras.layers.Dense(4),
                                 keras_hub.layers.PositionEmbedding(sequence_length=8))
