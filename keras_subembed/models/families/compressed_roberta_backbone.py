"""keras-hub's RoBERTa encoder with a token embedding of your choice."""

import keras
import keras_hub
import numpy as np

from keras_subembed.checks import check_bool
from keras_subembed.checks import check_positive_int
from keras_subembed.layers.compressed_embedding import CompressedEmbedding
from keras_subembed.layers.embedding_kinds import EMBEDDING_KINDS
from keras_subembed.layers.embedding_kinds import embedding_kind_name
from keras_subembed.layers.embedding_kinds import make_embedding
from keras_subembed.models.families.backbone_weights import copy_non_embedding_weights
from keras_subembed.models.families.compressed_backbone import CompressedBackbone
from keras_subembed.models.families.pretrained_embedding import dense_table
from keras_subembed.models.families.pretrained_embedding import pretrained_token_embedding

# Layers with `call(hidden, reverse=True)`; keras-hub's own backbones now build
# Keras' ReversibleEmbedding, older ones keras-hub's.
TIED_LOGIT_LAYERS = (
    CompressedEmbedding,
    keras_hub.layers.ReversibleEmbedding,
    keras.layers.ReversibleEmbedding,
)


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
class CompressedRobertaBackbone(CompressedBackbone):
    """keras-hub's `RobertaBackbone` with a token embedding of your choice.

    The `RobertaBackbone` these arguments describe, rebuilt by
    `CompressedBackbone` with its dense token table replaced by `embedding`
    -- a layer, a serialized layer config or a short name (`"embedding"`,
    `"sub"`, `"alone"`, `"define"`) built with `embedding_kwargs`. Inputs
    `token_ids` and `padding_mask`; output the final hidden states `(batch,
    sequence, hidden_dim)`. When the embedding's `output_dim` differs from
    `hidden_dim`, a dense projection follows it (as in ALBERT). Position
    embeddings stay dense, as in the papers.

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
    >>> tuple(backbone({"token_ids": np.ones((1, 12), "int32"),
    ...                 "padding_mask": np.ones((1, 12), "int32")}).shape)
    (1, 12, 256)
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
        roberta = {
            name: check_positive_int(name, value)
            for name, value in (
                ("vocabulary_size", vocabulary_size),
                ("num_layers", num_layers),
                ("num_heads", num_heads),
                ("hidden_dim", hidden_dim),
                ("intermediate_dim", intermediate_dim),
                ("max_sequence_length", max_sequence_length),
            )
        }
        if hidden_dim % num_heads:
            raise ValueError(
                f"`hidden_dim` must be divisible by `num_heads`. Received: "
                f"hidden_dim={hidden_dim}, num_heads={num_heads}"
            )
        token_embedding = make_token_embedding(
            embedding, vocabulary_size, hidden_dim, embedding_kwargs, dtype=dtype
        )
        projection = None
        if token_embedding.output_dim != hidden_dim:
            projection = keras.layers.Dense(
                hidden_dim,
                kernel_initializer=keras.initializers.TruncatedNormal(stddev=0.02),
                dtype=dtype,
                name="embedding_projection",
            )
        source = {
            "module": keras_hub.models.RobertaBackbone.__module__,
            "class_name": "RobertaBackbone",
            "registered_name": keras.saving.get_registered_name(keras_hub.models.RobertaBackbone),
            "config": {**roberta, "dropout": dropout, "dtype": dtype},
        }
        super().__init__(
            backbone=source,
            token_embedding=token_embedding,
            embedding_projection=projection,
            dtype=dtype,
            **kwargs,
        )

    @property
    def position_embedding(self):
        """The dense learned positions (keras-hub's `PositionEmbedding`)."""
        return self.get_layer("embeddings").position_embedding

    @property
    def transformer_layers(self):
        """The `TransformerEncoder` blocks, as `RobertaBackbone.transformer_layers`."""
        return [self.get_layer(f"transformer_layer_{index}") for index in range(self.num_layers)]

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
        ```python
        compressed = CompressedRobertaBackbone.from_backbone(
            roberta, embedding="sub",
            embedding_kwargs={"num_tables": 3, "rows_per_table": 100})
        ```
        """
        verbose = check_bool("verbose", verbose)
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
        config = {**_roberta_arguments(backbone), "dtype": backbone.dtype_policy, **kwargs}
        compressed = cls(embedding=embedding, **config)
        copy_non_embedding_weights(backbone, compressed)
        return compressed

    def get_config(self):
        # The arguments above, not `CompressedBackbone`'s.
        return {
            **keras_hub.models.Backbone.get_config(self),
            **_roberta_arguments(self),
            "embedding": keras.layers.serialize(self.token_embedding),
        }


def _roberta_arguments(backbone):
    """The `RobertaBackbone` arguments of `backbone`, `dtype` aside."""
    names = ("vocabulary_size", "num_layers", "num_heads", "hidden_dim", "intermediate_dim")
    return {name: getattr(backbone, name) for name in (*names, "dropout", "max_sequence_length")}
