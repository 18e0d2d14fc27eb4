"""`CompressedRobertaMaskedLMPreprocessor`: keras-hub's WordPiece masked-LM preprocessing
with the inputs of a RoBERTa backbone."""

import re

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_subembed.models.families.compressed_roberta_masked_lm_preprocessor import (
    CompressedRobertaMaskedLMPreprocessor,
)
from keras_subembed.models.families.compressed_roberta_masked_lm_preprocessor import (
    backbone_inputs,
)
from tests.models.tiny_encoders import VOCABULARY

TEXTS = ["rain in the city", "the road was closed"]


def preprocessor(**kwargs):
    return CompressedRobertaMaskedLMPreprocessor.from_vocabulary(
        VOCABULARY, sequence_length=8, mask_selection_length=3, **kwargs)


def check_backbone_inputs(x, y, weights):
    assert sorted(x) == ["mask_positions", "padding_mask", "token_ids"]  # no segment_ids
    assert keras.backend.standardize_dtype(x["padding_mask"].dtype) == "int32"
    # [CLS] rain in the city [SEP], [CLS] the road was closed [SEP]
    np.testing.assert_array_equal(np.asarray(x["padding_mask"]).sum(axis=1), [6, 6])
    assert np.asarray(x["token_ids"]).shape == (2, 8)
    assert np.asarray(y).shape == np.asarray(weights).shape == (2, 3)


def test_an_eager_call_gives_a_roberta_backbones_inputs():
    # The tf.data path (`_call_tf`, traced: seconds) is the training tests' own, in
    # test_compressed_roberta_backbone.py; both paths end in `backbone_inputs` below.
    check_backbone_inputs(*preprocessor()(TEXTS))


def test_from_vocabulary_checks_its_arguments_and_keeps_case_on_request():
    assert preprocessor(lowercase=False).tokenizer.lowercase is False
    with pytest.raises(ValueError, match=re.escape(
            "`sequence_length` must be a positive integer. Received: sequence_length=0 "
            "(of type int).")):
        CompressedRobertaMaskedLMPreprocessor.from_vocabulary(VOCABULARY, sequence_length=0)
    with pytest.raises(ValueError, match=re.escape(
            "`lowercase` must be a bool. Received: lowercase='yes'")):
        CompressedRobertaMaskedLMPreprocessor.from_vocabulary(VOCABULARY, lowercase="yes")


@pytest.mark.parametrize("cast", [keras.ops.cast, tf.cast], ids=["keras", "tf"])
def test_backbone_inputs_drop_segments_and_make_the_mask_int32(cast):
    x = {"token_ids": np.array([[2, 5, 3]]), "segment_ids": np.zeros((1, 3), "int32"),
         "padding_mask": np.array([[True, True, False]])}
    labels, weights = np.array([[5]]), np.array([[1.0]])
    new_x, new_labels, new_weights = backbone_inputs((x, labels, weights), cast=cast)
    assert sorted(new_x) == ["padding_mask", "token_ids"]
    mask = keras.ops.convert_to_numpy(new_x["padding_mask"])
    assert mask.dtype == np.int32
    np.testing.assert_array_equal(mask, [[1, 1, 0]])
    assert new_labels is labels and new_weights is weights
