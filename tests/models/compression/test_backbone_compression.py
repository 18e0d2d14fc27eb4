"""`compress_backbone`: a keras-hub text encoder copied with a compressed token table."""

import re

import keras
import numpy as np
import pytest

from keras_subembed.models.compression.backbone_compression import compress_backbone
from keras_subembed.models.compression.backbone_compression import compressed_backbone_class
from keras_subembed.models.compression.backbone_compression import shortened_config
from keras_subembed.models.families.compressed_backbone import CompressedBackbone
from keras_subembed.models.families.compressed_bert_backbone import CompressedBertBackbone
from keras_subembed.models.families.compressed_xlm_roberta_backbone import (
    CompressedXLMRobertaBackbone,
)
from tests.models.tiny_encoders import sequence_output
from tests.models.tiny_encoders import tiny_backbone
from tests.models.tiny_encoders import two_sentences


def test_each_family_has_its_class_and_other_encoders_the_generic_one():
    bert, xlm_roberta = tiny_backbone("bert"), tiny_backbone("xlm_roberta")
    assert compressed_backbone_class(bert) is CompressedBertBackbone
    assert compressed_backbone_class(xlm_roberta) is CompressedXLMRobertaBackbone
    for family in ("roberta", "distil_bert"):
        assert compressed_backbone_class(tiny_backbone(family)) is CompressedBackbone
    # compressed again, a copy keeps its family
    copy = compress_backbone(xlm_roberta, "embedding")
    assert compressed_backbone_class(copy) is CompressedXLMRobertaBackbone
    assert type(compress_backbone(copy, "embedding")) is CompressedXLMRobertaBackbone


def test_the_config_is_shortened_only_where_the_backbone_has_a_position_table():
    bert = tiny_backbone("bert")
    assert shortened_config(bert, None) == keras.saving.serialize_keras_object(bert)
    assert shortened_config(bert, 5)["config"]["max_sequence_length"] == 5
    with pytest.raises(ValueError, match=re.escape(
            "`max_sequence_length` can only shorten the model: its position table has 12 "
            "rows. Received: max_sequence_length=13")):
        shortened_config(bert, 13)
    with pytest.raises(ValueError, match=re.escape(
            "`max_sequence_length` must be a positive integer. Received: "
            "max_sequence_length=0 (of type int).")):
        shortened_config(bert, 0)
    copy = compress_backbone(bert, "embedding")
    with pytest.raises(ValueError, match=re.escape(
            "`max_sequence_length` shortens a backbone's position table; a "
            "CompressedBertBackbone has no `max_sequence_length` of its own. Shorten the "
            "backbone it was made from.")):
        shortened_config(copy, 5)


def test_a_shortened_copy_gives_the_sources_states_on_the_positions_it_keeps():
    bert = tiny_backbone("bert")
    short = compress_backbone(bert, "embedding", max_sequence_length=6, verbose=False)
    assert short.max_sequence_length == 6 and short.name == bert.name
    inputs = two_sentences(bert)  # six tokens
    np.testing.assert_allclose(sequence_output(short, inputs), sequence_output(bert, inputs),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match=re.escape(
            "`verbose` must be a bool. Received: verbose='no'")):
        compress_backbone(bert, "embedding", verbose="no")
