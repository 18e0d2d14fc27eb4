"""`find_token_embedding`: the layer of a model that maps token ids to vectors."""

import keras

from keras_subembed.layers import SubEmbedding
from keras_subembed.models.families.token_embedding import find_token_embedding
from tests.models.tiny_encoders import tiny_backbone
from tests.models.tiny_encoders import tiny_bert_embedder


def test_a_backbone_and_a_task_name_their_own_token_embedding():
    backbone = tiny_backbone("bert")
    assert find_token_embedding(backbone) is backbone.token_embedding
    embedder = tiny_bert_embedder()
    assert find_token_embedding(embedder) is embedder.backbone.token_embedding


def test_otherwise_the_embedding_of_the_largest_vocabulary_is_the_token_table():
    ids = keras.Input((None,), dtype="int32")
    positions = keras.layers.Embedding(64, 16, name="positions")
    tokens = SubEmbedding(1000, 16, name="tokens")
    segments = keras.layers.Embedding(2, 16, name="segments")
    model = keras.Model(ids, positions(ids) + tokens(ids) + segments(ids))
    assert find_token_embedding(model) is tokens


def test_a_model_without_an_embedding_has_none():
    inputs = keras.Input((4,))
    assert find_token_embedding(keras.Model(inputs, keras.layers.Dense(2)(inputs))) is None
