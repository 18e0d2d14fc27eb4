"""Deprecated: keras-hub's `TextEmbedder`s are the package's sentence embedders."""

import pathlib

import keras
import keras_hub

from keras_subembed.deprecation import register_retired_class
from keras_subembed.deprecation import warn_deprecated
from keras_subembed.models.compressed_text_embedder import COMPRESSED_TEXT_EMBEDDERS
from keras_subembed.models.encoder_inputs import check_sentence_inputs
from keras_subembed.models.model_files import check_sequence_length
from keras_subembed.models.model_files import model_sequence_limit
from keras_subembed.models.model_files import read_json
from keras_subembed.models.sentence_encoder_preprocessor import DEFAULT_SEQUENCE_LENGTH
from keras_subembed.models.sentence_encoder_preprocessor import preprocessor_from_preset

REPLACEMENT = "keras_hub.models.TextEmbedder.from_preset and keras_subembed.compress"


def text_embedder(backbone, preprocessor=None, pooling="mean", normalize=True, **kwargs):
    """The keras-hub `TextEmbedder` that pools `backbone`'s token states.

    `BertTextEmbedder` for an encoder with BERT's dict output, else
    `XLMRobertaTextEmbedder` (its head takes any encoder returning token
    states: RoBERTa, DistilBERT, ...); their compressed classes for compressed
    backbones. A preprocessor of another class is rebuilt as the embedder's
    own from its tokenizer and length.
    """
    if not isinstance(backbone, keras.Model):
        raise TypeError(
            "`backbone` must be a keras-hub text encoder (a keras.Model taking "
            f"`token_ids` and `padding_mask`). Received: backbone={backbone!r}"
        )
    check_sentence_inputs(backbone)
    bert_like = isinstance(backbone.output, dict) and "sequence_output" in backbone.output
    keras_hub_cls = (keras_hub.models.BertTextEmbedder if bert_like
                     else keras_hub.models.XLMRobertaTextEmbedder)
    compressed_cls = COMPRESSED_TEXT_EMBEDDERS[keras_hub_cls]
    cls = compressed_cls if isinstance(backbone, compressed_cls.backbone_cls) else keras_hub_cls
    if preprocessor is not None and not isinstance(preprocessor, cls.preprocessor_cls):
        preprocessor = cls.preprocessor_cls(
            preprocessor.tokenizer, sequence_length=preprocessor.sequence_length)
    return cls(backbone, preprocessor, pooling_mode=pooling, normalize=normalize, **kwargs)


class SentenceEncoder:
    """Deprecated: builds the keras-hub `TextEmbedder` for a backbone; warns once.

    `SentenceEncoder(backbone, preprocessor, pooling)` returns
    `text_embedder(...)` (a `BertTextEmbedder` for BERT and MiniLM); kept so
    code and `.keras` files of release 0.2 keep working. Use
    `keras_hub.models.TextEmbedder.from_preset(folder)` (with
    `keras_subembed.models.match_model_files`) and `keras_subembed.compress`.
    """

    def __new__(cls, backbone, preprocessor=None, pooling="mean", normalize=True, **kwargs):
        warn_deprecated("SentenceEncoder", REPLACEMENT)
        return text_embedder(backbone, preprocessor, pooling, normalize, **kwargs)

    @classmethod
    def from_preset(cls, preset, sequence_length=None, pooling=None, **kwargs):
        """A sentence embedder from a preset or a local Hugging Face folder,
        following its tokenizer normaliser, `max_seq_length` and (for a
        sentence-transformers folder) `1_Pooling/config.json`."""
        warn_deprecated("SentenceEncoder", REPLACEMENT)
        preset = str(preset)
        backbone = keras_hub.models.Backbone.from_preset(preset)
        limits = [limit for limit in (model_sequence_limit(preset),
                                      getattr(backbone, "max_sequence_length", None)) if limit]
        limit = min(limits, default=None)
        if sequence_length is None:
            sequence_length = limit or DEFAULT_SEQUENCE_LENGTH
        sequence_length = check_sequence_length(sequence_length, limit)
        if pooling is None:
            pooling = "mean"
            pooling_file = pathlib.Path(preset) / "1_Pooling" / "config.json"
            if pooling_file.is_file():
                from keras_subembed.datasets import minilm_pooling

                read_json(pooling_file)  # a damaged file is named, not a bare JSON error
                pooling = minilm_pooling(preset)
        preprocessor = preprocessor_from_preset(preset, sequence_length)
        return text_embedder(backbone, preprocessor, pooling, **kwargs)

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        backbone = keras.saving.deserialize_keras_object(config["backbone"])
        preprocessor = config.get("preprocessor")
        if isinstance(preprocessor, dict):
            preprocessor = keras.saving.deserialize_keras_object(preprocessor)
        return text_embedder(backbone, preprocessor, config.get("pooling", "mean"),
                             config.get("normalize", True), name=config.get("name"))


register_retired_class(SentenceEncoder)
