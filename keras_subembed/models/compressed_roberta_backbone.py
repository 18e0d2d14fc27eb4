"""A RoBERTa-style encoder on keras-hub whose token embedding is compressed."""

import keras
import keras_hub
import numpy as np

from keras_subembed.checks import check_positive_int
from keras_subembed.layers.compressed_embedding import CompressedEmbedding
from keras_subembed.layers.embedding_kinds import EMBEDDING_KINDS
from keras_subembed.layers.embedding_kinds import embedding_kind_name
from keras_subembed.layers.embedding_kinds import make_embedding
from keras_subembed.models.compressed_backbone import copy_non_embedding_weights
from keras_subembed.models.compressed_backbone import dense_table
from keras_subembed.models.compressed_backbone import pretrained_token_embedding



# Layers with `call(hidden, reverse=True)`; keras-hub's own backbones now build
# Keras' ReversibleEmbedding, older ones keras-hub's.
TIED_LOGIT_LAYERS = (
    CompressedEmbedding,
    keras_hub.layers.ReversibleEmbedding,
    keras.layers.ReversibleEmbedding,
)


def roberta_kernel_initializer(stddev=0.02):
    return keras.initializers.TruncatedNormal(stddev=stddev)




def make_token_embedding(embedding, vocabulary_size, hidden_dim, embedding_kwargs=None, dtype=None):
    """A token-embedding layer from a layer, a serialized config or a short name.

    Short names: `"embedding"` (the dense baseline, keras-hub's
    `ReversibleEmbedding` with tied weights), `"sub"`, `"alone"`, `"define"`;
    `embedding_kwargs` go to the layer's constructor, whose `output_dim`
    defaults to `hidden_dim`.
    """
    embedding_kwargs = dict(embedding_kwargs or {})
    if isinstance(embedding, dict):
        embedding = keras.layers.deserialize(embedding)
    if isinstance(embedding, str):
        if embedding not in EMBEDDING_KINDS:
            raise ValueError(
                f"`embedding` must be a layer, a layer config or one of "
                f"{sorted(EMBEDDING_KINDS)}. Received: embedding={embedding!r}"
            )
        embedding_kwargs.setdefault("output_dim", hidden_dim)
        embedding_kwargs.setdefault("dtype", dtype)
        embedding_kwargs.setdefault("name", "token_embedding")
        embedding = make_embedding(embedding, input_dim=vocabulary_size, **embedding_kwargs)
    elif embedding_kwargs:
        raise ValueError(
            "`embedding_kwargs` only apply when `embedding` is a short name. "
            f"Received: embedding_kwargs={embedding_kwargs!r}"
        )
    if not isinstance(embedding, TIED_LOGIT_LAYERS):
        raise ValueError(
            "`embedding` must support tied logits (`reverse=True`): a layer of "
            "keras_subembed.layers or a ReversibleEmbedding (Keras or keras-hub). "
            f"Received: embedding={embedding!r}"
        )
    if embedding.input_dim != vocabulary_size:
        raise ValueError(
            f"The token embedding's input_dim ({embedding.input_dim}) must equal "
            f"`vocabulary_size` ({vocabulary_size})."
        )
    return embedding


@keras.saving.register_keras_serializable(package="keras_subembed")
class CompressedRobertaBackbone(keras_hub.models.Backbone):
    """RoBERTa encoder (keras-hub layers) with a token embedding of your choice.

    Built like `keras_hub.models.RobertaBackbone`: token embedding, learned
    position embedding, layer norm, dropout and `num_layers` keras-hub
    `TransformerEncoder` blocks, with inputs `token_ids` and `padding_mask`
    and output the final hidden states `(batch, sequence, hidden_dim)`. The
    token embedding is `embedding` -- a layer, a serialized layer config or
    a short name (`"embedding"`, `"sub"`, `"alone"`, `"define"`) built with
    `embedding_kwargs`. When its `output_dim` differs from `hidden_dim`, a
    dense projection follows it (as in ALBERT). Position embeddings stay
    dense, as in the papers.

    It works with keras-hub's `RobertaMaskedLM` (see
    `keras_subembed.models.CompressedRobertaMaskedLM`), whose `MaskedLMHead`
    ties its output to `token_embedding` through `reverse=True`.

    Args:
        vocabulary_size: int. Size of the token vocabulary.
        num_layers: int. Number of transformer layers.
        num_heads: int. Attention heads; must divide `hidden_dim`.
        hidden_dim: int. Width of the transformer.
        intermediate_dim: int. Width of the transformer feed-forward layers.
        embedding: layer, config dict or short name (default `"embedding"`).
        embedding_kwargs: dict. Constructor arguments for a short name.
        dropout: float. Dropout rate of the embeddings and transformer.
        max_sequence_length: int. Longest sequence (position embeddings).
        dtype: dtype policy of the model.

    Example:
    >>> backbone = CompressedRobertaBackbone(
    ...     vocabulary_size=30_522, num_layers=4, num_heads=4, hidden_dim=256,
    ...     intermediate_dim=512, embedding="sub",
    ...     embedding_kwargs={"num_tables": 3, "reserved_ids": [0, 100, 101, 102, 103]})
    >>> backbone({"token_ids": np.ones((1, 12), "int32"),
    ...           "padding_mask": np.ones((1, 12), "int32")}).shape
    TensorShape([1, 12, 256])
    """

    def __init__(
        self,
        vocabulary_size,
        num_layers,
        num_heads,
        hidden_dim,
        intermediate_dim,
        embedding="embedding",
        embedding_kwargs=None,
        dropout=0.1,
        max_sequence_length=512,
        dtype=None,
        **kwargs,
    ):
        vocabulary_size = check_positive_int("vocabulary_size", vocabulary_size)
        num_layers = check_positive_int("num_layers", num_layers)
        num_heads = check_positive_int("num_heads", num_heads)
        hidden_dim = check_positive_int("hidden_dim", hidden_dim)
        intermediate_dim = check_positive_int("intermediate_dim", intermediate_dim)
        max_sequence_length = check_positive_int("max_sequence_length", max_sequence_length)
        if hidden_dim % num_heads:
            raise ValueError(
                f"`hidden_dim` must be divisible by `num_heads`. Received: "
                f"hidden_dim={hidden_dim}, num_heads={num_heads}"
            )
        # === Layers ===
        self.token_embedding = make_token_embedding(
            embedding, vocabulary_size, hidden_dim, embedding_kwargs, dtype=dtype
        )
        self.embedding_projection = None
        if self.token_embedding.output_dim != hidden_dim:
            self.embedding_projection = keras.layers.Dense(
                hidden_dim,
                kernel_initializer=roberta_kernel_initializer(),
                dtype=dtype,
                name="embedding_projection",
            )
        self.position_embedding = keras_hub.layers.PositionEmbedding(
            sequence_length=max_sequence_length,
            initializer=roberta_kernel_initializer(),
            dtype=dtype,
            name="position_embedding",
        )
        self.embeddings_add = keras.layers.Add(dtype=dtype, name="embeddings_add")
        self.embeddings_layer_norm = keras.layers.LayerNormalization(
            axis=-1, epsilon=1e-5, dtype=dtype, name="embeddings_layer_norm"
        )
        self.embeddings_dropout = keras.layers.Dropout(
            dropout, dtype=dtype, name="embeddings_dropout"
        )
        self.transformer_layers = [
            keras_hub.layers.TransformerEncoder(
                num_heads=num_heads,
                intermediate_dim=intermediate_dim,
                activation="gelu",
                dropout=dropout,
                layer_norm_epsilon=1e-5,
                kernel_initializer=roberta_kernel_initializer(),
                dtype=dtype,
                name=f"transformer_layer_{index}",
            )
            for index in range(num_layers)
        ]

        # === Functional Model ===
        token_id_input = keras.Input(shape=(None,), dtype="int32", name="token_ids")
        padding_mask_input = keras.Input(shape=(None,), dtype="int32", name="padding_mask")
        tokens = self.token_embedding(token_id_input)
        if self.embedding_projection is not None:
            tokens = self.embedding_projection(tokens)
        x = self.embeddings_add((tokens, self.position_embedding(tokens)))
        x = self.embeddings_layer_norm(x)
        x = self.embeddings_dropout(x)
        for transformer_layer in self.transformer_layers:
            x = transformer_layer(x, padding_mask=padding_mask_input)
        super().__init__(
            inputs={"token_ids": token_id_input, "padding_mask": padding_mask_input},
            outputs=x,
            dtype=dtype,
            **kwargs,
        )

        # === Config ===
        self.vocabulary_size = vocabulary_size
        self.num_layers = num_layers
        self.num_heads = num_heads
        self.hidden_dim = hidden_dim
        self.intermediate_dim = intermediate_dim
        self.dropout = dropout
        self.max_sequence_length = max_sequence_length
        self.start_token_index = 0

    @property
    def embedding_kind(self):
        """Short name of the token embedding (`"embedding"`, `"sub"`, ...)."""
        return embedding_kind_name(self.token_embedding) or type(self.token_embedding).__name__

    def embedding_parameters(self):
        """Trainable parameters of the token embedding (and its projection, if any).

        Stored non-trainable state (e.g. a SubEmbedding's codes) is not
        counted; `token_embedding.compression_report()` gives stored bytes.
        """
        layers = [self.token_embedding, self.embedding_projection]
        return sum(
            int(np.prod(weight.shape))
            for layer in layers
            if layer is not None
            for weight in layer.trainable_weights
        )

    @classmethod
    def from_backbone(
        cls, backbone, embedding="sub", embedding_kwargs=None, verbose=False, **kwargs
    ):
        """A compressed copy of a keras-hub `RobertaBackbone` (or of this class).

        The same conversion as `keras_subembed.models.compress_backbone`
        (token embedding from `pretrained_token_embedding`, every other weight
        copied exactly), returned as a `CompressedRobertaBackbone`. `kwargs`
        override the config (e.g. `dropout`). For other encoders (BERT,
        MiniLM, DistilBERT, XLM-R) use `compress_backbone`.

        Example:
        >>> compressed = CompressedRobertaBackbone.from_backbone(
        ...     roberta, embedding="sub",
        ...     embedding_kwargs={"num_tables": 3, "rows_per_table": 100})
        """
        source_embedding = backbone.token_embedding
        if isinstance(embedding, str):
            embedding = pretrained_token_embedding(
                dense_table(source_embedding),
                embedding,
                embedding_kwargs,
                name="token_embedding",
                dtype=backbone.dtype_policy,
                verbose=verbose,
            )
        config = {
            "vocabulary_size": backbone.vocabulary_size,
            "num_layers": backbone.num_layers,
            "num_heads": backbone.num_heads,
            "hidden_dim": backbone.hidden_dim,
            "intermediate_dim": backbone.intermediate_dim,
            "dropout": backbone.dropout,
            "max_sequence_length": backbone.max_sequence_length,
            "dtype": backbone.dtype_policy,
            **kwargs,
        }
        compressed = cls(embedding=embedding, **config)
        # keras-hub's RobertaBackbone keeps its positions inside `embeddings`
        # (TokenAndPositionEmbedding); this class keeps them at the top.
        copy_non_embedding_weights(
            backbone, compressed, rename=lambda path: path.removeprefix("embeddings/")
        )
        return compressed

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "num_layers": self.num_layers,
                "num_heads": self.num_heads,
                "hidden_dim": self.hidden_dim,
                "intermediate_dim": self.intermediate_dim,
                "embedding": keras.layers.serialize(self.token_embedding),
                "dropout": self.dropout,
                "max_sequence_length": self.max_sequence_length,
            }
        )
        return config
