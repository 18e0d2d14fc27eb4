"""What export finds inside a model: the model itself (a live one or a `.keras` file), its
embedding mode, its limits and the metadata a runner follows."""

import pytest

from keras_subembed.export.model_parts import with_embedding_mode
from keras_subembed.layers import SubEmbedding
from tests.export.conftest import masked_lm


@pytest.mark.tensorflow_only(reason="export to SavedModel / TFLite")
def test_frozen_mode_follows_the_layer_class_attribute(monkeypatch):
    mlm = masked_lm("sub", 60, num_tables=2)
    assert with_embedding_mode(mlm, "frozen") is mlm  # SubEmbedding: freezing gains nothing
    monkeypatch.setattr(SubEmbedding, "freeze_speeds_up", True, raising=False)
    frozen = with_embedding_mode(mlm, "frozen")
    assert frozen is not mlm and frozen.backbone.token_embedding.cached
    assert not mlm.backbone.token_embedding.cached
