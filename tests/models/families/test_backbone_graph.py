"""`backbone_graph`: where an encoder's token embedding sits in its graph, and fresh
copies of its other layers."""

import re
import types

import keras
import keras_hub
import pytest

from keras_subembed.models.families.backbone_graph import SUPPORTED_MESSAGE
from keras_subembed.models.families.backbone_graph import check_copyable
from keras_subembed.models.families.backbone_graph import embedding_node
from keras_subembed.models.families.backbone_graph import fresh_copy
from keras_subembed.models.families.backbone_graph import not_copyable
from tests.models.tiny_encoders import tiny_backbone


class NoConfig(keras.layers.Layer):
    """A layer that cannot be rebuilt (as Gemma's RMSNormalization)."""

    def get_config(self):
        raise NotImplementedError("Layer NoConfig does not implement get_config")


def test_bert_holds_its_table_alone_and_roberta_beside_its_positions():
    bert = tiny_backbone("bert")
    assert embedding_node(bert) is bert.token_embedding
    xlm_roberta = tiny_backbone("xlm_roberta")
    node = embedding_node(xlm_roberta)
    assert isinstance(node, keras_hub.layers.TokenAndPositionEmbedding)
    assert node.token_embedding is xlm_roberta.token_embedding


def test_what_is_not_a_text_encoder_is_named_with_what_is_supported():
    with pytest.raises(TypeError, match=re.escape(
            "`backbone` must be a keras-hub text encoder with a `token_embedding` layer. "
            "Received: backbone=<Sequential name=plain, built=False> (a Sequential). "
            f"{SUPPORTED_MESSAGE}")):
        embedding_node(keras.Sequential(name="plain"))


def test_a_layer_without_a_config_is_named_before_any_work():
    backbone = types.SimpleNamespace(layers=[keras.layers.Dense(2), NoConfig()])
    with pytest.raises(TypeError, match=re.escape(
            "Cannot compress a SimpleNamespace: it is not a supported text encoder (its "
            "layers cannot be copied: NotImplementedError: Layer NoConfig does not implement "
            f"get_config). {SUPPORTED_MESSAGE}")) as raised:
        check_copyable(backbone)
    assert isinstance(raised.value.__cause__, NotImplementedError)
    check_copyable(types.SimpleNamespace(layers=[keras.layers.Dense(2)]))  # nothing raised


def test_a_long_reason_is_cut_at_120_characters_on_one_line():
    reason = "word\n" * 40  # 200 characters over 40 lines
    message = str(not_copyable(object(), ValueError(reason)))
    shown = " ".join(reason.split())[:120]
    assert f"(its layers cannot be copied: ValueError: {shown}...). " in message
    assert "\n" not in message


def test_a_fresh_copy_is_a_new_trainable_layer_of_the_same_config():
    frozen = keras.layers.Dense(3, activation="relu", name="frozen")
    frozen.trainable = False
    copy = fresh_copy(frozen)
    assert copy is not frozen and type(copy) is keras.layers.Dense
    assert copy.trainable and not frozen.trainable
    assert copy.get_config() == {**frozen.get_config(), "trainable": True}
