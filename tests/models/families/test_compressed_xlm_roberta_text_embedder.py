"""`CompressedXLMRobertaTextEmbedder`: keras-hub's `XLMRobertaTextEmbedder` over a
compressed backbone."""

import re

import keras
import keras_hub
import numpy as np
import pytest

import keras_subembed
from keras_subembed.models.families.compressed_xlm_roberta_backbone import (
    CompressedXLMRobertaBackbone,
)
from keras_subembed.models.families.compressed_xlm_roberta_text_embedder import (
    CompressedXLMRobertaTextEmbedder,
)
from tests.models.tiny_encoders import tiny_backbone
from tests.models.tiny_encoders import two_sentences


def xlm_roberta_embedder():
    """keras-hub's embedder over a tiny XLM-RoBERTa, without a preprocessor."""
    return keras_hub.models.XLMRobertaTextEmbedder(tiny_backbone("xlm_roberta"),
                                                   pooling_mode="cls")


def test_a_dense_copy_gives_keras_hubs_vectors_for_token_ids():
    embedder = xlm_roberta_embedder()
    copy = keras_subembed.compress(embedder, "embedding")
    assert type(copy) is CompressedXLMRobertaTextEmbedder
    assert isinstance(copy, keras_hub.models.XLMRobertaTextEmbedder)
    assert type(copy.backbone) is CompressedXLMRobertaBackbone
    assert CompressedXLMRobertaTextEmbedder.backbone_cls is CompressedXLMRobertaBackbone
    assert copy.pooling_mode == "cls"
    ids = two_sentences(embedder.backbone)
    np.testing.assert_allclose(copy.predict(ids, verbose=0),
                               keras.ops.convert_to_numpy(embedder(ids)), rtol=1e-5, atol=1e-6)


def test_text_without_a_preprocessor_is_refused_naming_what_to_give():
    copy = keras_subembed.compress(xlm_roberta_embedder(), "embedding")
    with pytest.raises(TypeError, match=re.escape(
            "This model has no preprocessor: give `predict` a dict "
            "{'token_ids', 'padding_mask'}. Received: x=['rain in the city']")):
        copy.predict(["rain in the city"], verbose=0)
