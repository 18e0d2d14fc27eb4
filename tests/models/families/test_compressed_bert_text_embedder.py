"""`CompressedBertTextEmbedder`: keras-hub's `BertTextEmbedder` over a compressed backbone."""

import keras
import keras_hub
import numpy as np

import keras_subembed
from keras_subembed.files import vocabulary_fingerprint
from keras_subembed.models.families.compressed_bert_backbone import CompressedBertBackbone
from keras_subembed.models.families.compressed_bert_text_embedder import (
    CompressedBertTextEmbedder,
)
from tests.models.tiny_encoders import VOCABULARY
from tests.models.tiny_encoders import tiny_bert_embedder

TEXTS = ["rain in the city", "the road was closed"]


def test_a_dense_copy_gives_keras_hubs_vectors_with_its_preprocessor_and_head():
    embedder = tiny_bert_embedder(pooling_mode="max", normalize=False)
    copy = keras_subembed.compress(embedder, "embedding")
    assert type(copy) is CompressedBertTextEmbedder
    assert isinstance(copy, keras_hub.models.BertTextEmbedder)
    assert type(copy.backbone) is CompressedBertBackbone
    assert CompressedBertTextEmbedder.backbone_cls is CompressedBertBackbone
    assert copy.preprocessor is embedder.preprocessor
    assert (copy.pooling_mode, copy.normalize) == ("max", False)
    # keras-hub's vectors from an eager call (its `predict` traces its tf.data pipeline: seconds)
    expected = keras.ops.convert_to_numpy(embedder(embedder.preprocessor(TEXTS)))
    np.testing.assert_allclose(copy.encode_text(TEXTS), expected, rtol=1e-5, atol=1e-6)


def test_its_config_records_the_vocabulary_it_was_built_with():
    copy = keras_subembed.compress(tiny_bert_embedder(), "embedding")
    config = copy.get_config()
    assert config["vocabulary_sha256"] == vocabulary_fingerprint(VOCABULARY)
    rebuilt = CompressedBertTextEmbedder.from_config(config)
    assert rebuilt.vocabulary_sha256 == config["vocabulary_sha256"]
