"""`CompressedRobertaMaskedLM`: keras-hub's RoBERTa masked LM over a compressed backbone."""

import re

import keras
import numpy as np
import pytest

from keras_subembed.models.families.compressed_roberta_backbone import CompressedRobertaBackbone
from keras_subembed.models.families.compressed_roberta_masked_lm import CompressedRobertaMaskedLM
from keras_subembed.models.families.compressed_roberta_masked_lm_preprocessor import (
    CompressedRobertaMaskedLMPreprocessor,
)
from tests.models.tiny_encoders import SIZES
from tests.models.tiny_encoders import VOCABULARY


def masked_lm(vocabulary_size=len(VOCABULARY)):
    keras.utils.set_random_seed(0)
    backbone = CompressedRobertaBackbone(vocabulary_size, embedding="embedding", **SIZES)
    preprocessor = CompressedRobertaMaskedLMPreprocessor.from_vocabulary(
        VOCABULARY, sequence_length=8, mask_selection_length=2)
    return CompressedRobertaMaskedLM(backbone, preprocessor)


def test_a_config_restores_the_packages_backbone_and_preprocessor():
    model = masked_lm()
    assert CompressedRobertaMaskedLM.backbone_cls is CompressedRobertaBackbone
    assert CompressedRobertaMaskedLM.preprocessor_cls is CompressedRobertaMaskedLMPreprocessor
    rebuilt = CompressedRobertaMaskedLM.from_config(model.get_config())
    assert type(rebuilt.backbone) is CompressedRobertaBackbone
    assert type(rebuilt.preprocessor) is CompressedRobertaMaskedLMPreprocessor
    x, _, _ = model.preprocessor(["rain in the city"])
    rebuilt.set_weights(model.get_weights())
    np.testing.assert_allclose(keras.ops.convert_to_numpy(rebuilt(x)),
                               keras.ops.convert_to_numpy(model(x)), rtol=1e-6, atol=1e-6)


def test_a_vocabulary_larger_than_the_tokenizers_is_refused_with_the_fix():
    with pytest.raises(ValueError, match=re.escape(
            f"The tokenizer's vocabulary ({len(VOCABULARY)} tokens) does not match the "
            f"backbone's token embedding ({len(VOCABULARY) + 2} ids). Build the backbone with "
            "vocabulary_size=preprocessor.tokenizer.vocabulary_size().")):
        masked_lm(len(VOCABULARY) + 2)


def test_its_presets_are_saved_without_replacing_a_users_files(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match=re.escape("holds files this package did not "
                                                        "write (notes.txt)")):
        masked_lm().save_to_preset(tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["notes.txt"]
