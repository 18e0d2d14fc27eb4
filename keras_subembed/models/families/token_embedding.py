"""Finding a model's token embedding: the layer that maps token ids to vectors."""

import keras

from keras_subembed.layer_walk import walk_layers
from keras_subembed.layers.compressed_embedding import CompressedEmbedding


def find_token_embedding(model):
    """The layer that maps token ids to vectors, or None.

    `model.token_embedding`, else `model.backbone.token_embedding` (keras-hub
    backbones and tasks), else the embedding layer (a `CompressedEmbedding`
    or `keras.layers.Embedding`) with the largest vocabulary: position and
    segment embeddings are smaller.

    Args:
        model: a `keras.Model` (a keras-hub task or backbone, or any model).

    Returns:
        The token-embedding layer, or None when the model has none.

    Example:
    >>> ids = keras.Input((None,), dtype="int32")
    >>> table = keras_subembed.layers.SubEmbedding(1000, 16, name="tokens")
    >>> positions = keras.layers.Embedding(64, 16)
    >>> model = keras.Model(ids, table(ids) + positions(keras.ops.arange(8)))
    >>> find_token_embedding(model).name
    'tokens'
    """
    for owner in (model, getattr(model, "backbone", None)):
        embedding = getattr(owner, "token_embedding", None)
        if embedding is not None:
            return embedding
    embeddings = [
        layer for layer in walk_layers(model)
        if isinstance(layer, (CompressedEmbedding, keras.layers.Embedding))
    ]
    # max keeps the first of equals: a compressed layer before the layers inside it.
    return max(embeddings, key=lambda layer: layer.input_dim, default=None)
