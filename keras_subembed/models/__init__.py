"""keras-hub models with compressed embeddings: masked-LM pretraining, and
compressing, distilling and shipping pretrained encoders as sentence embedders.

The names below are the public API. The modules are grouped by concern, in
one-way floors (`[importlinter:contract:models-floors]` in setup.cfg):
`compression/` (`compress`) and `training/` (`EmbeddingDistiller`) above
`families/` (the compressed model classes), above `encoding/` (an encoder's
inputs and sentence vectors) and `files/` (model folders and presets).
"""

from keras_subembed.layers.positional_token_embedding import PositionalTokenEmbedding
from keras_subembed.models.compression.backbone_compression import compress_backbone
from keras_subembed.models.encoding.length_batches import encode_by_length
from keras_subembed.models.encoding.sentence_vectors import sentence_vectors
from keras_subembed.models.families.compressed_backbone import CompressedBackbone
from keras_subembed.models.families.compressed_bert_backbone import CompressedBertBackbone
from keras_subembed.models.families.compressed_bert_text_embedder import (
    CompressedBertTextEmbedder,
)
from keras_subembed.models.families.compressed_roberta_backbone import CompressedRobertaBackbone
from keras_subembed.models.families.compressed_roberta_masked_lm import CompressedRobertaMaskedLM
from keras_subembed.models.families.compressed_roberta_masked_lm_preprocessor import (
    CompressedRobertaMaskedLMPreprocessor,
)
from keras_subembed.models.families.compressed_xlm_roberta_backbone import (
    CompressedXLMRobertaBackbone,
)
from keras_subembed.models.families.compressed_xlm_roberta_text_embedder import (
    CompressedXLMRobertaTextEmbedder,
)
from keras_subembed.models.families.pretrained_embedding import pretrained_token_embedding
from keras_subembed.models.families.token_embedding import find_token_embedding
from keras_subembed.models.files.model_files import load_text_embedder
from keras_subembed.models.files.model_files import match_model_files
from keras_subembed.models.files.model_files import model_sequence_limit
from keras_subembed.models.files.presets import save_preset
from keras_subembed.models.training.distillation_dataset import distillation_dataset
from keras_subembed.models.training.embedding_distiller import EmbeddingDistiller
from keras_subembed.models.training.token_weights import token_weights

__all__ = [
    "CompressedBackbone",
    "CompressedBertBackbone",
    "CompressedBertTextEmbedder",
    "CompressedRobertaBackbone",
    "CompressedRobertaMaskedLM",
    "CompressedRobertaMaskedLMPreprocessor",
    "CompressedXLMRobertaBackbone",
    "CompressedXLMRobertaTextEmbedder",
    "EmbeddingDistiller",
    "compress_backbone",
    "distillation_dataset",
    "encode_by_length",
    "find_token_embedding",
    "load_text_embedder",
    "match_model_files",
    "model_sequence_limit",
    "pretrained_token_embedding",
    "save_preset",
    "sentence_vectors",
    "token_weights",
]
