"""`presets`: keras-hub presets written beside their target and moved into place, never
over a user's files."""

import json
import re

import keras_hub
import numpy as np
import pytest

from keras_subembed.files import WRITTEN_BY
from keras_subembed.models.files.presets import PRESET_MARKER
from keras_subembed.models.files.presets import check_preset_target
from keras_subembed.models.files.presets import foreign_entries
from keras_subembed.models.files.presets import is_preset_folder
from keras_subembed.models.files.presets import mark_preset
from keras_subembed.models.files.presets import save_preset
from tests.models.tiny_encoders import tiny_backbone


def test_the_marker_lists_every_entry_and_anything_added_later_is_foreign(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "vocab.txt").write_text("[PAD]\n")
    mark_preset(tmp_path)
    marker = json.loads((tmp_path / PRESET_MARKER).read_text())
    assert marker == {"written_by": WRITTEN_BY,
                      "entries": ["assets", "assets/vocab.txt", "config.json"]}
    assert is_preset_folder(tmp_path) and foreign_entries(tmp_path) == []
    (tmp_path / "assets" / "notes.txt").write_text("mine")
    assert foreign_entries(tmp_path) == ["assets/notes.txt"]
    assert not is_preset_folder(tmp_path)
    assert not is_preset_folder(tmp_path / "config.json")  # not a folder


def test_a_folder_without_a_marker_is_all_foreign(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / PRESET_MARKER).write_text(json.dumps({"written_by": "someone else"}))
    assert foreign_entries(tmp_path) == ["config.json", PRESET_MARKER]


def test_a_target_is_new_empty_or_a_preset_replaced_on_request(tmp_path):
    assert check_preset_target(tmp_path / "new", overwrite=False) == tmp_path / "new"
    (tmp_path / "empty").mkdir()
    assert check_preset_target(tmp_path / "empty", overwrite=False) == tmp_path / "empty"
    preset = tmp_path / "preset"
    preset.mkdir()
    (preset / "config.json").write_text("{}")
    mark_preset(preset)
    with pytest.raises(FileExistsError, match=re.escape(
            f"{str(preset)!r} holds a preset; pass overwrite=True to replace it.")):
        check_preset_target(preset, overwrite=False)
    assert check_preset_target(preset, overwrite=True) == preset


def test_a_file_a_link_and_a_users_folder_are_never_targets(tmp_path):
    (tmp_path / "model.keras").write_text("")
    with pytest.raises(FileExistsError, match=re.escape(
            f"{str(tmp_path / 'model.keras')!r} exists and is not a folder")):
        check_preset_target(tmp_path / "model.keras", overwrite=True)
    (tmp_path / "link").symlink_to(tmp_path / "model.keras")
    with pytest.raises(FileExistsError, match=re.escape(f"{str(tmp_path / 'link')!r} is a link")):
        check_preset_target(tmp_path / "link", overwrite=True)
    users = tmp_path / "users"
    users.mkdir()
    for name in ("a", "b", "c", "d", "e", "f", "g"):
        (users / f"{name}.txt").write_text(name)
    with pytest.raises(FileExistsError, match=re.escape(
            f"{str(users)!r} holds files this package did not write (a.txt, b.txt, c.txt, "
            "d.txt, e.txt, f.txt, ...): a preset never replaces them, overwrite=True included.")):
        check_preset_target(users, overwrite=True)


def test_a_backbone_round_trips_through_keras_hub_and_is_marked(tmp_path):
    backbone = tiny_backbone("bert")
    path = save_preset(backbone, str(tmp_path / "preset"))
    assert path == tmp_path / "preset" and is_preset_folder(path)
    assert {"config.json", "model.weights.h5", PRESET_MARKER} <= {p.name for p in path.iterdir()}
    loaded = keras_hub.models.Backbone.from_preset(str(path))
    for saved, original in zip(loaded.get_weights(), backbone.get_weights()):
        np.testing.assert_array_equal(saved, original)
    with pytest.raises(ValueError, match=re.escape(
            "`sequence_length` sets the preprocessor's length, and the model has no "
            "preprocessor. Received: sequence_length=8")):
        save_preset(backbone, tmp_path / "other", sequence_length=8)
