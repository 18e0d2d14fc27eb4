"""Token embedding plus learned positions, with any token-embedding layer."""

import keras

from keras_subembed.layers.compressed_embedding import CompressedEmbedding


@keras.saving.register_keras_serializable(package="keras_subembed")
class PositionalTokenEmbedding(keras.layers.Layer):
    """`token_embedding(ids) [-> projection] + position_embedding(...)`, like keras-hub's layer.

    keras-hub's `TokenAndPositionEmbedding` (used by `RobertaBackbone`,
    `XLMRobertaBackbone` and `DistilBertBackbone`) always builds its own dense
    token table. This layer computes the same sum with a token embedding
    passed in, so a compressed layer can take the dense table's place while
    the position embedding (and its weights) stay as they were.

    Args:
        token_embedding: a layer mapping ids to `(..., d)` vectors (any layer
            of `keras_subembed.layers`, or a `keras.layers.Embedding`).
        position_embedding: a `keras_hub.layers.PositionEmbedding`.
        projection: optional `keras.layers.Dense` from a narrower token
            embedding to the model's width (ALBERT's factorisation); tied
            logits still use `token_embedding` itself.

    Example:
    >>> embeddings = PositionalTokenEmbedding(
    ...     keras_subembed.layers.SubEmbedding(1000, 16, num_tables=2),
    ...     keras_hub.layers.PositionEmbedding(sequence_length=32))
    >>> tuple(embeddings(np.ones((2, 8), "int32")).shape)
    (2, 8, 16)
    """

    def __init__(self, token_embedding, position_embedding, projection=None, **kwargs):
        super().__init__(**kwargs)
        token_embedding, position_embedding, projection = (
            keras.layers.deserialize(layer) if isinstance(layer, dict) else layer
            for layer in (token_embedding, position_embedding, projection)
        )
        if not isinstance(token_embedding, (CompressedEmbedding, keras.layers.Embedding)):
            raise TypeError(
                "`token_embedding` must be a layer of keras_subembed.layers or a "
                f"keras.layers.Embedding. Received: token_embedding={token_embedding!r}"
            )
        self.token_embedding = token_embedding
        self.position_embedding = position_embedding
        self.projection = projection
        self.supports_masking = self.token_embedding.supports_masking

    def build(self, input_shape):
        if not self.token_embedding.built:
            self.token_embedding.build(input_shape)
        if self.projection is not None and not self.projection.built:
            self.projection.build(tuple(input_shape) + (self.token_embedding.output_dim,))
        self.position_embedding.build(self.compute_output_shape(input_shape))
        self.built = True

    @property
    def output_dim(self):
        if self.projection is not None:
            return self.projection.units
        return self.token_embedding.output_dim

    def call(self, inputs, start_index=0, positions=None):
        tokens = self.token_embedding(inputs)
        if self.projection is not None:
            tokens = self.projection(tokens)
        return tokens + self.position_embedding(
            tokens, start_index=start_index, positions=positions
        )

    def compute_mask(self, inputs, mask=None):
        return self.token_embedding.compute_mask(inputs, mask)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.output_dim,)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "token_embedding": keras.layers.serialize(self.token_embedding),
                "position_embedding": keras.layers.serialize(self.position_embedding),
                "projection": (
                    None if self.projection is None else keras.layers.serialize(self.projection)
                ),
            }
        )
        return config
