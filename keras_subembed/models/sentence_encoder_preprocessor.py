"""Raw sentences -> `token_ids` and `padding_mask` for a `SentenceEncoder`."""

import keras
import keras_hub

from keras_subembed.models.model_files import check_sequence_length
from keras_subembed.models.model_files import model_normalization
from keras_subembed.models.model_files import model_sequence_limit

# Used only when neither the call nor the model's files give a length.
DEFAULT_SEQUENCE_LENGTH = 128


@keras.saving.register_keras_serializable(package="keras_subembed")
class SentenceEncoderPreprocessor(keras_hub.models.TextClassifierPreprocessor):
    """Tokenizes and packs sentences as `[CLS] tokens [SEP] [PAD]...`.

    keras-hub's `TextClassifierPreprocessor` (so it runs inside `tf.data` on
    every backend) with the label handling kept and `segment_ids` dropped:
    a sentence encoder's signature is `token_ids, padding_mask -> embedding`.
    Works with any keras-hub tokenizer that has start, end and pad tokens
    (`BertTokenizer`, `RobertaTokenizer`, ...). `from_preset` follows the
    model's own files: its normaliser (`tokenizer.json`: lowercase, strip
    accents, as uncased BERT was trained) and its length limit
    (`sentence_bert_config.json`'s `max_seq_length`).

    Example:
    >>> preprocessor = SentenceEncoderPreprocessor.from_preset(minilm_preset_dir())
    >>> preprocessor(["A naïve sentence."])["token_ids"].shape
    (1, 256)
    """

    def call(self, x, y=None, sample_weight=None):
        features = super().call(x)
        features = {name: features[name] for name in ("token_ids", "padding_mask")}
        return keras.utils.pack_x_y_sample_weight(features, y, sample_weight)

    @classmethod
    def from_preset(cls, preset, sequence_length=None, **kwargs):
        """The preprocessor of a keras-hub preset or a local Hugging Face folder.

        Args:
            preset: a preset name or folder.
            sequence_length: tokens per sentence with `[CLS]` and `[SEP]`;
                default the model's own `max_seq_length`
                (`sentence_bert_config.json`), else 128. At most that limit.
        """
        preset = str(preset)  # keras-hub takes names and folders as strings only
        tokenizer = keras_hub.tokenizers.Tokenizer.from_preset(preset)
        for name, value in model_normalization(preset).items():
            if hasattr(tokenizer, name):
                setattr(tokenizer, name, value)
        limit = model_sequence_limit(preset)
        if sequence_length is None:
            sequence_length = limit or DEFAULT_SEQUENCE_LENGTH
        check_sequence_length(sequence_length, limit)
        return cls(tokenizer, sequence_length=sequence_length, **kwargs)
