"""Raw sentences -> `token_ids` and `padding_mask` for a `SentenceEncoder`."""

import keras
import keras_hub


@keras.saving.register_keras_serializable(package="keras_subembed")
class SentenceEncoderPreprocessor(keras_hub.models.TextClassifierPreprocessor):
    """Tokenizes and packs sentences as `[CLS] tokens [SEP] [PAD]...`.

    keras-hub's `TextClassifierPreprocessor` (so it runs inside `tf.data` on
    every backend) with the label handling kept and `segment_ids` dropped:
    a sentence encoder's signature is `token_ids, padding_mask -> embedding`.
    Works with any keras-hub tokenizer that has start, end and pad tokens
    (`BertTokenizer`, `RobertaTokenizer`, ...).

    Example:
    >>> tokenizer = keras_hub.models.BertTokenizer.from_preset(minilm_preset_dir())
    >>> preprocessor = SentenceEncoderPreprocessor(tokenizer, sequence_length=128)
    >>> preprocessor(["A sentence."])["token_ids"].shape
    (1, 128)
    """

    def call(self, x, y=None, sample_weight=None):
        features = super().call(x)
        features = {name: features[name] for name in ("token_ids", "padding_mask")}
        return keras.utils.pack_x_y_sample_weight(features, y, sample_weight)
