"""Compressed drop-in replacements for `keras.layers.Embedding`."""

from keras_subembed.layers.alone_embedding import ALONEEmbedding
from keras_subembed.layers.compressed_embedding import CompressedEmbedding
from keras_subembed.layers.compression_report import CompressionReport
from keras_subembed.layers.define_embedding import DeFINEEmbedding
from keras_subembed.layers.group_linear import GroupLinear
from keras_subembed.layers.sub_embedding import SubEmbedding

__all__ = ["ALONEEmbedding", "CompressedEmbedding", "CompressionReport",
    "DeFINEEmbedding",
    "GroupLinear",
    "SubEmbedding"]
