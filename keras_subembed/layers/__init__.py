"""Compressed drop-in replacements for `keras.layers.Embedding`."""

from keras_subembed.layers.alone_embedding import ALONEEmbedding
from keras_subembed.layers.compressed_embedding import CompressedEmbedding
from keras_subembed.layers.compression_report import CompressionReport
from keras_subembed.layers.define_embedding import DeFINEEmbedding
from keras_subembed.layers.embedding_kinds import EMBEDDING_KINDS
from keras_subembed.layers.embedding_kinds import EmbeddingKind
from keras_subembed.layers.embedding_kinds import embedding_kind_name
from keras_subembed.layers.embedding_kinds import make_embedding
from keras_subembed.layers.embedding_kinds import make_pretrained_embedding
from keras_subembed.layers.embedding_kinds import register_embedding_kind
from keras_subembed.layers.group_linear import GroupLinear
from keras_subembed.layers.positional_token_embedding import PositionalTokenEmbedding
from keras_subembed.layers.split_embedding import SplitEmbedding
from keras_subembed.layers.sub_embedding import SubEmbedding

__all__ = [
    "ALONEEmbedding",
    "CompressedEmbedding",
    "CompressionReport",
    "DeFINEEmbedding",
    "EMBEDDING_KINDS",
    "EmbeddingKind",
    "GroupLinear",
    "PositionalTokenEmbedding",
    "SplitEmbedding",
    "SubEmbedding",
    "embedding_kind_name",
    "make_embedding",
    "make_pretrained_embedding",
    "register_embedding_kind",
]
