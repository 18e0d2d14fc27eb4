"""Any keras-hub text encoder with its token embedding swapped for another layer."""

import keras
import keras_hub

from keras_subembed.layers.compressed_embedding import remember_model
from keras_subembed.layers.positional_token_embedding import PositionalTokenEmbedding
from keras_subembed.models.families.backbone_graph import embedding_node
from keras_subembed.models.families.backbone_graph import fresh_copy
from keras_subembed.models.families.backbone_graph import not_copyable
from keras_subembed.models.families.backbone_weights import check_preset_weights
from keras_subembed.models.families.backbone_weights import token_embedding_mismatch
from keras_subembed.models.files.presets import save_to_preset


@keras.saving.register_keras_serializable(package="keras_subembed")
class CompressedBackbone(keras_hub.models.Backbone):
    """A keras-hub text encoder whose token embedding is another layer.

    The architecture is the one of `backbone` (a serialized keras-hub
    `Backbone`: `BertBackbone`, `RobertaBackbone`, `XLMRobertaBackbone`,
    `DistilBertBackbone`, `CompressedRobertaBackbone`, ...): same inputs, same
    outputs, same layer names, with the token embedding replaced by
    `token_embedding`. Its configuration attributes (`vocabulary_size`,
    `hidden_dim`, `num_layers`, ...) are copied, so keras-hub task models
    that take a backbone (`BertTextClassifier`, `RobertaMaskedLM`, ...) use it
    as they use the original.

    Build one with `keras_subembed.models.compress_backbone(backbone)`, which
    also copies the pretrained weights.

    Args:
        backbone: the serialized source backbone
            (`keras.saving.serialize_keras_object(backbone)`): it describes
            the architecture only; no weights are read from it.
        token_embedding: the new token-embedding layer (or its config).
        embedding_projection: optional `keras.layers.Dense` after a token
            embedding narrower than the model (ALBERT-style; RoBERTa-like
            backbones only, see `PositionalTokenEmbedding`).
    """

    # The keras-hub backbone class a family subclass stands for: what
    # `compress_backbone` turns into it (`CompressedBertBackbone`, ...).
    source_cls = None

    def __init__(self, backbone, token_embedding, embedding_projection=None, dtype=None, **kwargs):
        token_embedding, embedding_projection = (
            keras.layers.deserialize(layer) if isinstance(layer, dict) else layer
            for layer in (token_embedding, embedding_projection)
        )
        source = keras.saving.deserialize_keras_object(backbone)
        node = embedding_node(source)
        width, output_dim = source.token_embedding.output_dim, token_embedding.output_dim
        if embedding_projection is not None:
            if node is source.token_embedding:
                raise ValueError(
                    "`embedding_projection` needs a backbone whose positions are added "
                    f"with the tokens (RoBERTa-like); a {type(source).__name__} has none."
                )
            width = node.compute_output_shape((None, None))[-1]
            output_dim = embedding_projection.units
        elif getattr(node, "projection", None) is not None:
            embedding_projection = fresh_copy(node.projection)  # kept, as the positions are
        if token_embedding.input_dim != source.token_embedding.input_dim or output_dim != width:
            raise ValueError(
                f"`token_embedding` maps {token_embedding.input_dim} ids to width "
                f"{output_dim}; the {type(source).__name__} needs "
                f"{source.token_embedding.input_dim} ids and width {width}."
            )
        replacement = token_embedding
        if node is not source.token_embedding:
            replacement = PositionalTokenEmbedding(
                token_embedding,
                fresh_copy(node.position_embedding),
                projection=embedding_projection,
                dtype=node.dtype_policy,
                name=node.name,
            )
        # Fresh layers (not the source's): each is then called once, in this
        # graph only, so `layer.output` stays unambiguous (distillation reads
        # hidden states that way).
        try:
            graph = keras.models.clone_model(
                source,
                clone_function=lambda layer: replacement if layer is node else fresh_copy(layer),
            )
        except Exception as error:  # a layer that cannot be rebuilt from its config
            raise not_copyable(source, error) from error
        super().__init__(
            inputs=graph.input,
            outputs=graph.output,
            dtype=dtype if dtype is not None else source.dtype_policy,
            **kwargs,
        )
        for key, value in source.get_config().items():
            if key not in ("name", "trainable", "dtype") and isinstance(
                value, (int, float, str, bool, type(None))
            ):
                setattr(self, key, value)
        for attribute in ("cls_token_index", "start_token_index"):
            if hasattr(source, attribute):
                setattr(self, attribute, getattr(source, attribute))
        self.token_embedding = token_embedding
        self.embedding_projection = embedding_projection
        self.source_backbone = backbone
        remember_model(self)  # `freeze` and `fake_quantized` retrace its steps

    save_to_preset = save_to_preset

    @classmethod
    def from_preset(cls, preset, load_weights=True, **kwargs):
        """keras-hub's `Backbone.from_preset`; a local preset without its weights
        file gets a `FileNotFoundError` naming it."""
        load_weights = check_preset_weights(preset, load_weights)
        return super().from_preset(preset, load_weights=load_weights, **kwargs)

    def load_weights(self, filepath, *args, **kwargs):
        try:
            return super().load_weights(filepath, *args, **kwargs)
        except ValueError as error:
            # Keras says "expected 5 variables, but received 0" when a preset's
            # config was edited; name the shapes that differ instead.
            mismatch = token_embedding_mismatch(self.token_embedding, filepath)
            if mismatch is None:
                raise
            raise ValueError(mismatch) from error

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "backbone": self.source_backbone,
                "token_embedding": keras.layers.serialize(self.token_embedding),
            }
        )
        if self.embedding_projection is not None:
            config["embedding_projection"] = keras.layers.serialize(self.embedding_projection)
        return config
