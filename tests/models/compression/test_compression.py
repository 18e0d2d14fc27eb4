"""`compress`: the one door from a keras-hub model to its compressed copy."""

import re

import keras_hub
import pytest

from keras_subembed.models.compression.compression import compress
from keras_subembed.models.families.compressed_bert_backbone import CompressedBertBackbone
from keras_subembed.models.families.compressed_bert_text_embedder import (
    CompressedBertTextEmbedder,
)
from tests.models.tiny_encoders import VOCABULARY
from tests.models.tiny_encoders import tiny_backbone
from tests.models.tiny_encoders import tiny_bert_embedder


def test_an_embedder_comes_back_an_embedder_and_a_backbone_a_backbone():
    embedder = compress(tiny_bert_embedder(sequence_length=6), "embedding",
                        max_sequence_length=6)
    assert type(embedder) is CompressedBertTextEmbedder
    assert embedder.backbone.max_sequence_length == 6
    backbone = compress(tiny_backbone("bert"), "sub", {"num_tables": 2, "rows_per_table": 4},
                        max_sequence_length=6)
    assert type(backbone) is CompressedBertBackbone
    assert backbone.max_sequence_length == 6


def test_anything_else_is_refused_naming_what_is_taken():
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=VOCABULARY)
    with pytest.raises(TypeError, match=re.escape(
            "`model` must be a keras-hub TextEmbedder (e.g. BertTextEmbedder) or a text-encoder "
            "Backbone (e.g. BertBackbone). Received: model=<BertTokenizer name=bert_tokenizer")):
        compress(tokenizer)
    with pytest.raises(TypeError, match=re.escape("Received: model='model.keras' (a str)")):
        compress("model.keras")
