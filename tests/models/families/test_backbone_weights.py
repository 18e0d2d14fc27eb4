"""`backbone_weights`: a backbone's weights copied outside its token table, and checked
against a preset's weights file."""

import re

import keras
import numpy as np
import pytest

from keras_subembed.models.families.backbone_weights import check_preset_weights
from keras_subembed.models.families.backbone_weights import copy_non_embedding_weights
from keras_subembed.models.families.backbone_weights import token_embedding_mismatch
from tests.models.tiny_encoders import VOCABULARY
from tests.models.tiny_encoders import tiny_backbone


def weights_by_path(backbone):
    return {weight.path: keras.ops.convert_to_numpy(weight) for weight in backbone.weights}


def test_every_weight_but_the_token_table_is_copied_exactly():
    source, target = tiny_backbone("bert", seed=1), tiny_backbone("bert", seed=2)
    table_before = keras.ops.convert_to_numpy(target.token_embedding.embeddings)
    copy_non_embedding_weights(source, target)
    copied, wanted = weights_by_path(target), weights_by_path(source)
    table = target.token_embedding.embeddings.path
    assert len(copied) > 10
    for path, value in wanted.items():
        if path != table:
            np.testing.assert_array_equal(copied[path], value, err_msg=path)
    np.testing.assert_array_equal(copied[table], table_before)
    assert not np.array_equal(copied[table], wanted[table])


def test_a_shorter_position_table_keeps_the_first_positions():
    source = tiny_backbone("bert", seed=1)
    target = tiny_backbone("bert", seed=2, max_sequence_length=5)
    copy_non_embedding_weights(source, target)
    position = next(path for path in weights_by_path(source) if "position_embedding/" in path)
    np.testing.assert_array_equal(weights_by_path(target)[position],
                                  weights_by_path(source)[position][:5])


def test_backbones_of_other_layers_are_refused_naming_the_weights_that_differ():
    source, target = tiny_backbone("bert"), tiny_backbone("bert", num_layers=2)
    with pytest.raises(ValueError, match=r"^The backbones' non-embedding weights differ: "
                       r"\['transformer_layer_1/.*\] \(16 in all\)\.$"):
        copy_non_embedding_weights(source, target)


def test_a_weights_file_of_another_vocabulary_is_named_shape_by_shape(tmp_path):
    backbone = tiny_backbone("bert")
    path = tmp_path / "model.weights.h5"
    backbone.save_weights(path)
    assert token_embedding_mismatch(backbone.token_embedding, path) is None
    larger = tiny_backbone("bert", vocabulary_size=len(VOCABULARY) + 3)
    assert token_embedding_mismatch(larger.token_embedding, path) == (
        f"The weights file {str(path)!r} does not fit the model its config describes: the "
        "token embedding 'token_embedding' (ReversibleEmbedding, {'input_dim': 15, "
        "'output_dim': 8}) needs weights embeddings (15, 8); the file holds (12, 8). Was the "
        "preset's config.json or task.json edited?")
    unreadable = tmp_path / "broken.weights.h5"
    unreadable.write_bytes(b"not an HDF5 file")
    assert token_embedding_mismatch(larger.token_embedding, unreadable) is None


def test_a_local_preset_without_its_weights_is_named_before_keras_hub_reads_it(tmp_path):
    assert check_preset_weights(tmp_path, load_weights=False) is False
    with pytest.raises(FileNotFoundError, match=re.escape(
            f"The preset {str(tmp_path)!r} has no weights: model.weights.h5 is missing "
            "(nor is it sharded: no model.weights.json).")):
        check_preset_weights(tmp_path, load_weights=True)
    (tmp_path / "model.weights.json").write_text("{}")  # a sharded preset's index
    assert check_preset_weights(tmp_path, load_weights=True) is True
    assert check_preset_weights("kaggle://owner/model/keras/preset", True) is True
    with pytest.raises(ValueError, match=re.escape(
            "`load_weights` must be a bool. Received: load_weights='yes'")):
        check_preset_weights(tmp_path, "yes")
