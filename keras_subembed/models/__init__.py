"""keras-hub models with compressed embeddings: masked-LM pretraining, and
compressing, distilling and shipping pretrained encoders as sentence embedders."""

from keras_subembed.models.backbone_compression import compress_backbone
from keras_subembed.models.compressed_backbone import CompressedBackbone
from keras_subembed.models.compressed_bert_backbone import CompressedBertBackbone
from keras_subembed.models.compressed_bert_text_embedder import CompressedBertTextEmbedder
from keras_subembed.models.compressed_xlm_roberta_backbone import CompressedXLMRobertaBackbone
from keras_subembed.models.compressed_xlm_roberta_text_embedder import (
    CompressedXLMRobertaTextEmbedder,
)
from keras_subembed.models.pretrained_embedding import pretrained_token_embedding
from keras_subembed.models.compressed_roberta_backbone import CompressedRobertaBackbone
from keras_subembed.models.compressed_roberta_masked_lm import CompressedRobertaMaskedLM
from keras_subembed.models.compressed_roberta_masked_lm_preprocessor import (
    CompressedRobertaMaskedLMPreprocessor,
)
from keras_subembed.models.distillation_dataset import distillation_dataset
from keras_subembed.models.embedding_distiller import EmbeddingDistiller
from keras_subembed.models.length_batches import encode_by_length
from keras_subembed.models.model_files import load_text_embedder
from keras_subembed.models.model_files import match_model_files
from keras_subembed.models.model_files import model_sequence_limit
from keras_subembed.layers.positional_token_embedding import PositionalTokenEmbedding
from keras_subembed.models.presets import save_preset
from keras_subembed.models.sentence_vectors import sentence_vectors
from keras_subembed.models.token_embedding import find_token_embedding
from keras_subembed.models.token_weights import token_weights

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
