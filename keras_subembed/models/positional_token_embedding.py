"""Token embedding plus learned positions, with any token-embedding layer."""

import keras

from keras_subembed.layers.compressed_embedding import CompressedEmbedding


@keras.saving.register_keras_serializable(package="keras_subembed")
class PositionalTokenEmbedding(keras.layers.Layer):
    """`token_embedding(ids) + position_embedding(...)`, like keras-hub's layer.

    keras-hub's `TokenAndPositionEmbedding` (used by `RobertaBackbone`,
    `XLMRobertaBackbone` and `DistilBertBackbone`) always builds its own dense
    token table. This layer computes the same sum with a token embedding
    passed in, so a compressed layer can take the dense table's place while
    the position embedding (and its weights) stay as they were.

    Args:
        token_embedding: a layer mapping ids to `(..., d)` vectors (any layer
            of `keras_subembed.layers`, or a `keras.layers.Embedding`).
        position_embedding: a `keras_hub.layers.PositionEmbedding`.

    Example:
    >>> embeddings = PositionalTokenEmbedding(
    ...     SubEmbedding(1000, 16, num_tables=2),
    ...     keras_hub.layers.PositionEmbedding(sequence_length=32))
    >>> embeddings(np.ones((2, 8), "int32")).shape
    (2, 8, 16)
    """

    def __init__(self, token_embedding, position_embedding, **kwargs):
        super().__init__(**kwargs)
        if isinstance(token_embedding, dict):
            token_embedding = keras.layers.deserialize(token_embedding)
        if isinstance(position_embedding, dict):
            position_embedding = keras.layers.deserialize(position_embedding)
        if not isinstance(token_embedding, (CompressedEmbedding, keras.layers.Embedding)):
            raise TypeError(
                "`token_embedding` must be a layer of keras_subembed.layers or a "
                f"keras.layers.Embedding. Received: token_embedding={token_embedding!r}"
            )
        self.token_embedding = token_embedding
        self.position_embedding = position_embedding
        self.supports_masking = self.token_embedding.supports_masking

    def build(self, input_shape):
        if not self.token_embedding.built:
            self.token_embedding.build(input_shape)
        self.position_embedding.build(tuple(input_shape) + (self.token_embedding.output_dim,))
        self.built = True

    def call(self, inputs, start_index=0, positions=None):
        tokens = self.token_embedding(inputs)
        return tokens + self.position_embedding(
            tokens, start_index=start_index, positions=positions
        )

    def compute_mask(self, inputs, mask=None):
        return self.token_embedding.compute_mask(inputs, mask)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.token_embedding.output_dim,)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "token_embedding": keras.layers.serialize(self.token_embedding),
                "position_embedding": keras.layers.serialize(self.position_embedding),
            }
        )
        return config
