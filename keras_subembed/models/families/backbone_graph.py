"""Reading and rebuilding a keras-hub encoder's graph around its token embedding.

Which encoders `compress_backbone` takes, where their token embedding sits
in the functional graph, and fresh copies of their other layers.
"""

import keras
import keras_hub

from keras_subembed.layers.compressed_embedding import CompressedEmbedding
from keras_subembed.layers.positional_token_embedding import PositionalTokenEmbedding

SUPPORTED_BACKBONES = (
    "BertBackbone",
    "RobertaBackbone",
    "XLMRobertaBackbone",
    "DistilBertBackbone",
    "CompressedRobertaBackbone",
    "CompressedBackbone",
)
SUPPORTED_MESSAGE = (
    f"Supported: {', '.join(SUPPORTED_BACKBONES)} (any keras-hub Backbone whose "
    "token embedding is a layer of its functional graph, alone or inside "
    "TokenAndPositionEmbedding)."
)
# keras-hub layers that own the token embedding together with the positions.
TOKEN_AND_POSITION_LAYERS = (
    keras_hub.layers.TokenAndPositionEmbedding,
    PositionalTokenEmbedding,
)


def embedding_node(backbone):
    """The layer of `backbone`'s graph that holds its token embedding: the
    embedding itself, or the token-and-position layer around it."""
    embedding = getattr(backbone, "token_embedding", None)
    if not isinstance(backbone, keras_hub.models.Backbone) or not isinstance(
        embedding, (keras.layers.Embedding, CompressedEmbedding)
    ):
        raise TypeError(
            "`backbone` must be a keras-hub text encoder with a `token_embedding` "
            f"layer. Received: backbone={backbone!r:.80} (a {type(backbone).__name__}). "
            f"{SUPPORTED_MESSAGE}"
        )
    for layer in backbone.layers:
        if layer is embedding:
            return layer
        if isinstance(layer, TOKEN_AND_POSITION_LAYERS) and layer.token_embedding is embedding:
            return layer
    raise TypeError(
        f"Cannot compress a {type(backbone).__name__}: its token embedding is not a "
        f"layer of its functional graph. {SUPPORTED_MESSAGE}"
    )


def not_copyable(backbone, error):
    """The TypeError for a backbone whose layers cannot be rebuilt (a decoder
    such as Gemma, whose RMSNormalization has no config)."""
    reason = " ".join(str(error).split())
    return TypeError(
        f"Cannot compress a {type(backbone).__name__}: it is not a supported text encoder "
        f"(its layers cannot be copied: {type(error).__name__}: {reason[:120]}"
        f"{'...' if len(reason) > 120 else ''}). {SUPPORTED_MESSAGE}"
    )


def check_copyable(backbone):
    """Fail before any codes are fitted when a layer has no usable config."""
    for layer in backbone.layers:
        try:
            layer.get_config()
        except Exception as error:
            raise not_copyable(backbone, error) from error


def fresh_copy(layer):
    """A new `layer` from its config, trainable."""
    # Trainable whatever the source: a teacher frozen for distillation must
    # not hand its frozen state to a student built from it.
    config = layer.get_config()
    if "trainable" in config:  # layers have it; graph operations (GetItem) do not
        config["trainable"] = True
    return layer.__class__.from_config(config)
