"""`CompressedXLMRobertaBackbone`: what `compress_backbone` makes of a keras-hub
`XLMRobertaBackbone`."""

import keras_hub
import numpy as np

from keras_subembed.layers import PositionalTokenEmbedding
from keras_subembed.models import compress_backbone
from keras_subembed.models.families.compressed_xlm_roberta_backbone import (
    CompressedXLMRobertaBackbone,
)
from tests.models.tiny_encoders import sequence_output
from tests.models.tiny_encoders import tiny_backbone
from tests.models.tiny_encoders import two_sentences


def test_an_xlm_roberta_backbone_keeps_its_positions_beside_the_new_table():
    source = tiny_backbone("xlm_roberta")
    copy = compress_backbone(source, "embedding")
    assert type(copy) is CompressedXLMRobertaBackbone
    assert CompressedXLMRobertaBackbone.source_cls is keras_hub.models.XLMRobertaBackbone
    [holder] = [layer for layer in copy.layers if isinstance(layer, PositionalTokenEmbedding)]
    assert holder.token_embedding is copy.token_embedding
    inputs = two_sentences(source)
    assert "segment_ids" not in inputs
    np.testing.assert_allclose(sequence_output(copy, inputs), sequence_output(source, inputs),
                               rtol=1e-5, atol=1e-6)


def test_a_shortened_copy_keeps_the_first_positions_of_the_table_beside_the_tokens():
    source = tiny_backbone("xlm_roberta")
    short = compress_backbone(source, "embedding", max_sequence_length=6)
    assert type(short) is CompressedXLMRobertaBackbone and short.max_sequence_length == 6
    [holder] = [layer for layer in short.layers if isinstance(layer, PositionalTokenEmbedding)]
    assert tuple(holder.position_embedding.position_embeddings.shape) == (6, 8)
    inputs = two_sentences(source)  # six tokens
    np.testing.assert_allclose(sequence_output(short, inputs), sequence_output(source, inputs),
                               rtol=1e-5, atol=1e-6)
