"""`compress_text_embedder`: a keras-hub `TextEmbedder` copied with a compressed token table."""

import re

import pytest

from keras_subembed.models.compression.text_embedder_compression import compress_text_embedder
from keras_subembed.models.compression.text_embedder_compression import (
    compressed_embedder_class,
)
from keras_subembed.models.families.compressed_bert_text_embedder import (
    CompressedBertTextEmbedder,
)
from tests.models.tiny_encoders import tiny_backbone
from tests.models.tiny_encoders import tiny_bert_embedder


def test_the_preprocessor_and_the_head_are_the_embedders_own():
    embedder = tiny_bert_embedder(pooling_mode="cls", normalize=False)
    copy = compress_text_embedder(embedder, "embedding")
    assert type(copy) is CompressedBertTextEmbedder
    assert copy.preprocessor is embedder.preprocessor
    assert (copy.pooling_mode, copy.normalize, copy.name) == ("cls", False, embedder.name)
    assert copy.backbone is not embedder.backbone
    assert compressed_embedder_class(copy) is CompressedBertTextEmbedder


def test_what_is_not_a_supported_embedder_is_refused_naming_the_backbones_door():
    with pytest.raises(TypeError, match=re.escape(
            "Cannot compress a BertBackbone: supported TextEmbedders are "
            "BertTextEmbedder, XLMRobertaTextEmbedder (and their compressed versions). "
            "Compress the backbone of another model with `compress(model.backbone, ...)`.")):
        compress_text_embedder(tiny_backbone("bert"), "embedding")


def test_a_preprocessor_longer_than_the_kept_positions_is_refused():
    embedder = tiny_bert_embedder(sequence_length=8)
    with pytest.raises(ValueError, match=re.escape(
            "The embedder's preprocessor packs 8 tokens, more than `max_sequence_length=6`: "
            "set `embedder.preprocessor.sequence_length` to at most 6 first.")):
        compress_text_embedder(embedder, "embedding", max_sequence_length=6)
    embedder.preprocessor.sequence_length = 6
    short = compress_text_embedder(embedder, "embedding", max_sequence_length=6)
    assert short.backbone.max_sequence_length == 6
