"""Any text encoder as a sentence embedder: `token_ids, padding_mask -> embedding`."""

import pathlib

import keras
import keras_hub
import numpy as np

from keras_subembed.models.encoder_inputs import backbone_inputs
from keras_subembed.models.encoder_inputs import check_id_batch
from keras_subembed.models.encoder_inputs import narrow_ids
from keras_subembed.models.encoder_inputs import sequence_output
from keras_subembed.models.sentence_encoder_preprocessor import DEFAULT_SEQUENCE_LENGTH
from keras_subembed.models.sentence_encoder_preprocessor import SentenceEncoderPreprocessor
from keras_subembed.models.encoder_inputs import check_sentences
from keras_subembed.models.model_files import check_sequence_length
from keras_subembed.models.model_files import model_sequence_limit
from keras_subembed.models.model_files import read_json
from keras_subembed.models.sentence_pooling import SentencePooling


@keras.saving.register_keras_serializable(package="keras_subembed")
class SentenceEncoder(keras_hub.models.Task):
    """Sentence vectors from a keras-hub text encoder (original or compressed).

    Inputs `token_ids` and `padding_mask` (int32, `(batch, length)`); output
    `{"embedding": (batch, hidden_dim)}`, pooled over the valid tokens as the
    model was trained (`"mean"` for all-MiniLM-L6-v2) and L2-normalised. A
    BERT-style backbone gets segment 0 everywhere. With a `preprocessor`,
    `predict` and `fit` take raw strings; `export_tflite` ships it with the
    signature `token_ids, padding_mask -> embedding`.

    Args:
        backbone: a keras-hub text encoder (`BertBackbone`, `RobertaBackbone`,
            ..., or a `keras_subembed.models.CompressedBackbone`).
        preprocessor: a `SentenceEncoderPreprocessor`, or `None` for ids.
        pooling: `"mean"`, `"cls"` or `"max"`.
        normalize: L2-normalise the vectors (default `True`).

    Example:
    >>> encoder = SentenceEncoder.from_preset(minilm_preset_dir())
    >>> vectors = encoder.predict(["A sentence.", "Another one."])["embedding"]
    """

    def __init__(self, backbone, preprocessor=None, pooling="mean", normalize=True, **kwargs):
        if not isinstance(backbone, keras.Model):
            raise TypeError(
                "`backbone` must be a keras-hub text encoder (a keras.Model taking "
                f"`token_ids` and `padding_mask`). Received: backbone={backbone!r}"
            )
        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor
        self.pooler = SentencePooling(
            pooling, normalize, dtype=backbone.dtype_policy, name="pooling"
        )

        # === Functional Model ===
        token_ids = keras.Input(shape=(None,), dtype="int32", name="token_ids")
        padding_mask = keras.Input(shape=(None,), dtype="int32", name="padding_mask")
        states = sequence_output(backbone, backbone(backbone_inputs(backbone, token_ids, padding_mask)))
        embedding = self.pooler(states, padding_mask)
        super().__init__(
            inputs={"token_ids": token_ids, "padding_mask": padding_mask},
            outputs={"embedding": embedding},
            compile=False,
            **kwargs,
        )

        # === Config ===
        self.pooling = pooling
        self.normalize = normalize

    @classmethod
    def from_preset(cls, preset, sequence_length=None, pooling=None, **kwargs):
        """A sentence encoder from a keras-hub preset or a local Hugging Face folder.

        Follows the model's own files: the tokenizer's normaliser (see
        `SentenceEncoderPreprocessor.from_preset`), the length it was trained
        with (`sentence_bert_config.json`'s `max_seq_length`, at most the
        position table; the default `sequence_length`, and its upper bound)
        and, for a sentence-transformers folder (e.g.
        `keras_subembed.datasets.minilm_preset_dir()`), the pooling
        (`1_Pooling/config.json`) unless `pooling` is given; otherwise `"mean"`.
        """
        preset = str(preset)  # keras-hub takes names and folders as strings only
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
        preprocessor = SentenceEncoderPreprocessor.from_preset(
            preset, sequence_length=sequence_length)
        return cls(backbone, preprocessor, pooling=pooling, **kwargs)

    def call(self, inputs, training=None, mask=None):
        return super().call(narrow_ids(inputs), training=training, mask=mask)

    def preprocess_samples(self, x, y=None, sample_weight=None):
        # Token ids given to a model with a preprocessor go straight in.
        if isinstance(x, dict) and "token_ids" in x:
            return keras.utils.pack_x_y_sample_weight(x, y, sample_weight)
        return super().preprocess_samples(x, y, sample_weight)

    def predict(self, x=None, *args, **kwargs):
        check_sentences(x, self.preprocessor)
        check_id_batch(x, self.backbone.token_embedding.input_dim, max_sequence_length(self))
        return super().predict(x, *args, **kwargs)

    def get_config(self):
        config = super().get_config()
        config.update({"pooling": self.pooling, "normalize": self.normalize})
        return config


def max_sequence_length(model):
    limit = getattr(model.backbone, "max_sequence_length", None)
    return limit if isinstance(limit, int) else None


