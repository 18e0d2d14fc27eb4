"""`CompressedBertBackbone`: what `compress_backbone` makes of a keras-hub `BertBackbone`."""

import keras
import keras_hub
import numpy as np

from keras_subembed.layers import SubEmbedding
from keras_subembed.models import compress_backbone
from keras_subembed.models.families.compressed_backbone import CompressedBackbone
from keras_subembed.models.families.compressed_bert_backbone import CompressedBertBackbone
from tests.models.tiny_encoders import sequence_output
from tests.models.tiny_encoders import tiny_backbone
from tests.models.tiny_encoders import two_sentences


def test_a_bert_backbone_becomes_one_with_the_same_outputs():
    bert = tiny_backbone("bert")
    copy = compress_backbone(bert, "embedding")
    assert type(copy) is CompressedBertBackbone and isinstance(copy, CompressedBackbone)
    assert CompressedBertBackbone.source_cls is keras_hub.models.BertBackbone
    assert (copy.vocabulary_size, copy.hidden_dim, copy.max_sequence_length) == (12, 8, 12)
    inputs = two_sentences(bert)
    np.testing.assert_allclose(sequence_output(copy, inputs), sequence_output(bert, inputs),
                               rtol=1e-5, atol=1e-6)


def test_it_is_registered_and_rebuilds_from_its_config_and_weights(tmp_path):
    small = compress_backbone(tiny_backbone("bert"), "sub", {"num_tables": 2,
                                                            "rows_per_table": 4})
    assert (keras.saving.get_registered_name(CompressedBertBackbone)
            == "keras_subembed>CompressedBertBackbone")
    rebuilt = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(small))
    assert type(rebuilt) is CompressedBertBackbone
    assert type(rebuilt.token_embedding) is SubEmbedding
    small.save_weights(tmp_path / "small.weights.h5")
    rebuilt.load_weights(tmp_path / "small.weights.h5")
    inputs = two_sentences(small)
    np.testing.assert_allclose(sequence_output(rebuilt, inputs), sequence_output(small, inputs),
                               rtol=1e-6, atol=1e-6)
