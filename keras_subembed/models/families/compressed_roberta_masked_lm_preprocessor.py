"""keras-hub's WordPiece masked-LM preprocessing, with the inputs of a RoBERTa backbone."""

import keras
import keras_hub
import tensorflow as tf

from keras_subembed.checks import check_bool
from keras_subembed.checks import check_positive_int
from keras_subembed.models.families.compressed_roberta_backbone import CompressedRobertaBackbone
from keras_subembed.models.families.keras_hub_internals import preprocessing_function


@keras.saving.register_keras_serializable(package="keras_subembed")
class CompressedRobertaMaskedLMPreprocessor(keras_hub.models.BertMaskedLMPreprocessor):
    """Raw strings -> `({token_ids, padding_mask, mask_positions}, mask_ids, weights)`.

    keras-hub's `BertMaskedLMPreprocessor`: a WordPiece tokenizer
    (`keras_hub.models.BertTokenizer`: `[CLS] ... [SEP]`, `[PAD]`, `[MASK]`)
    and keras-hub's `MaskedLMMaskGenerator` (15% of tokens selected; of
    those 80% masked, 10% random, 10% kept). It outputs exactly the inputs of
    `CompressedRobertaBackbone` and `RobertaMaskedLM` (no `segment_ids`; an
    int32 `padding_mask`).

    `from_vocabulary()` builds one from a vocabulary list or file (e.g. the
    30,522-token lowercase vocabulary of all-MiniLM-L6-v2,
    `keras_subembed.datasets.minilm_vocabulary()`, so the pretrained MiniLM
    table can drive clustered codes).

    Example:
    >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "quick",
    ...               "brown", "fox", "jumped", "."]
    >>> preprocessor = CompressedRobertaMaskedLMPreprocessor.from_vocabulary(
    ...     vocabulary, sequence_length=16)
    >>> x, y, weights = preprocessor(["The quick brown fox jumped."])
    """

    backbone_cls = CompressedRobertaBackbone

    @classmethod
    def from_vocabulary(cls, vocabulary, sequence_length=128, lowercase=True, **kwargs):
        """A preprocessor for `vocabulary` (a list of tokens or a file path).

        `kwargs` go to `keras_hub.models.BertMaskedLMPreprocessor` (masking rates,
        `mask_selection_length`, ...).
        """
        sequence_length = check_positive_int("sequence_length", sequence_length)
        lowercase = check_bool("lowercase", lowercase)
        tokenizer = cls.tokenizer_cls(vocabulary=vocabulary, lowercase=lowercase)
        return cls(tokenizer=tokenizer, sequence_length=sequence_length, **kwargs)

    # keras-hub runs `_call_tf` inside tf.data and `tf.function` (on every
    # backend, so only tf ops there: `keras.ops` on JAX cannot take a symbolic
    # tf.Tensor) and `_call_python` for eager calls.
    @preprocessing_function
    def _call_tf(self, x, y=None, sample_weight=None):
        outputs = super()._call_tf(x, y, sample_weight)
        return backbone_inputs(outputs, cast=tf.cast)

    def _call_python(self, x, y=None, sample_weight=None):
        outputs = super()._call_python(x, y, sample_weight)
        return backbone_inputs(outputs, cast=keras.ops.cast)


def backbone_inputs(outputs, cast):
    """Drops `segment_ids` and makes `padding_mask` int32 with `cast`."""
    x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(outputs)
    x = {key: value for key, value in x.items() if key != "segment_ids"}
    # The backbone's input is int32; a bool mask also breaks input
    # distribution under tf.distribute.MirroredStrategy (AddN on bool).
    x["padding_mask"] = cast(x["padding_mask"], "int32")
    return keras.utils.pack_x_y_sample_weight(x, y, sample_weight)
