"""Deprecated: keras-hub's `TextEmbedderPreprocessor`s tokenize and pack sentences."""

import keras
import keras_hub

from keras_subembed.deprecation import register_retired_class
from keras_subembed.deprecation import warn_deprecated
from keras_subembed.models.model_files import check_sequence_length
from keras_subembed.models.model_files import match_normalization
from keras_subembed.models.model_files import model_sequence_limit

# Used only when neither the call nor the model's files give a length.
DEFAULT_SEQUENCE_LENGTH = 128


def text_embedder_preprocessor(tokenizer, sequence_length=DEFAULT_SEQUENCE_LENGTH, **kwargs):
    """keras-hub's embedder preprocessor for `tokenizer`: BERT's (with
    `segment_ids`) for a WordPiece `BertTokenizer`, else XLM-R's
    (`token_ids`, `padding_mask`)."""
    if isinstance(tokenizer, keras_hub.models.BertTokenizer):
        cls = keras_hub.models.BertTextEmbedderPreprocessor
    else:
        cls = keras_hub.models.XLMRobertaTextEmbedderPreprocessor
    return cls(tokenizer, sequence_length=sequence_length, **kwargs)


class SentenceEncoderPreprocessor:
    """Deprecated: builds keras-hub's `BertTextEmbedderPreprocessor` (or
    `XLMRobertaTextEmbedderPreprocessor` for other tokenizers); warns once.

    Kept so code and `.keras` files of release 0.2 keep working. Use
    `keras_hub.models.TextEmbedder.from_preset(folder)` and
    `keras_subembed.models.match_model_files` instead.
    """

    def __new__(cls, tokenizer, sequence_length=DEFAULT_SEQUENCE_LENGTH, **kwargs):
        warn_deprecated("SentenceEncoderPreprocessor",
                        "keras_hub.models.BertTextEmbedderPreprocessor")
        return text_embedder_preprocessor(tokenizer, sequence_length, **kwargs)

    @classmethod
    def from_preset(cls, preset, sequence_length=None, **kwargs):
        """The preprocessor of a preset or Hugging Face folder, following the
        model's own normaliser and `max_seq_length`."""
        warn_deprecated("SentenceEncoderPreprocessor",
                        "keras_hub.models.BertTextEmbedderPreprocessor")
        return preprocessor_from_preset(preset, sequence_length, **kwargs)

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        tokenizer = keras.saving.deserialize_keras_object(config.pop("tokenizer"))
        config = {key: config[key] for key in ("sequence_length", "truncate", "name")
                  if key in config}
        return text_embedder_preprocessor(tokenizer, **config)


register_retired_class(SentenceEncoderPreprocessor)


def preprocessor_from_preset(preset, sequence_length=None, **kwargs):
    preset = str(preset)  # keras-hub takes names and folders as strings only
    tokenizer = match_normalization(keras_hub.tokenizers.Tokenizer.from_preset(preset), preset)
    limit = model_sequence_limit(preset)
    if sequence_length is None:
        sequence_length = limit or DEFAULT_SEQUENCE_LENGTH
    check_sequence_length(sequence_length, limit)
    return text_embedder_preprocessor(tokenizer, sequence_length, **kwargs)
