"""A RoBERTa-style masked-LM on keras-hub that trains with any compressed embedding."""

from keras_subembed.models.compressed_roberta_backbone import CompressedRobertaBackbone
from keras_subembed.models.compressed_roberta_masked_lm import CompressedRobertaMaskedLM
from keras_subembed.models.compressed_roberta_masked_lm_preprocessor import (
    CompressedRobertaMaskedLMPreprocessor,
)

__all__ = [
    "CompressedRobertaBackbone",
    "CompressedRobertaMaskedLM",
    "CompressedRobertaMaskedLMPreprocessor",
]
