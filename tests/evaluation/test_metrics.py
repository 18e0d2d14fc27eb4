"""`plot_quality_vs_size` as a writer: the package's file guarantees, the suffix's format."""

import re

import numpy as np
import pytest

from keras_subembed import evaluation

ROWS = [{"name": "teacher", "file_mb": 22.0, "cosine": 1.0},
        {"name": "sub K=2", "file_mb": 9.0, "cosine": 0.9}]

# The first bytes of each format the suffix names.
SIGNATURES = {".png": b"\x89PNG\r\n\x1a\n", ".pdf": b"%PDF-", ".svg": b"<?xml",
              ".eps": b"%!PS-Adobe", ".ps": b"%!PS-Adobe"}


@pytest.mark.parametrize("suffix", sorted(SIGNATURES))
def test_the_file_is_in_the_format_its_suffix_names(tmp_path, suffix):
    path = evaluation.plot_quality_vs_size(ROWS, tmp_path / f"quality{suffix}")
    assert path.read_bytes().startswith(SIGNATURES[suffix])
    # Replaceable: it proves it is ours.
    evaluation.plot_quality_vs_size(ROWS, path, overwrite=True)
    assert path.read_bytes().startswith(SIGNATURES[suffix])


def test_an_unknown_suffix_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"`path` must end in one of \.png, \.pdf.*"
                                         r"path='.*quality\.jpgg'"):
        evaluation.plot_quality_vs_size(ROWS, tmp_path / "quality.jpgg")
    with pytest.raises(ValueError, match=r"must end in one of.*path='.*quality'"):
        evaluation.plot_quality_vs_size(ROWS, tmp_path / "quality")
    assert list(tmp_path.iterdir()) == []


def test_nothing_is_overwritten_without_overwrite_and_never_a_file_it_did_not_write(tmp_path):
    path = tmp_path / "quality.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n a photo")
    with pytest.raises(FileExistsError, match=r"exists; pass overwrite=True to replace it"):
        evaluation.plot_quality_vs_size(ROWS, path)
    with pytest.raises(FileExistsError, match=r"exists and is not a plot this function wrote"):
        evaluation.plot_quality_vs_size(ROWS, path, overwrite=True)
    assert path.read_bytes() == b"\x89PNG\r\n\x1a\n a photo"
    with pytest.raises(ValueError, match=r"`overwrite` must be a bool. Received: overwrite='yes'"):
        evaluation.plot_quality_vs_size(ROWS, tmp_path / "new.png", overwrite="yes")


def test_a_failed_plot_leaves_nothing_behind(tmp_path):
    with pytest.raises(ValueError, match="No row has both"):
        evaluation.plot_quality_vs_size(ROWS, tmp_path / "quality.pdf", quality="topic")
    assert list(tmp_path.iterdir()) == []


def test_stratified_bootstrap_weighs_each_group_alike_and_is_paired():
    groups = [np.array([1.0, 1.0, 1.0, 0.0]), np.array([0.0, 1.0] * 10)]
    low, high = evaluation.stratified_bootstrap_interval(groups, rounds=500)
    assert low < (0.75 + 0.5) / 2 < high and high - low < 0.5
    # Against itself the paired difference has no spread.
    assert evaluation.stratified_bootstrap_interval(groups, groups, rounds=500) == (0.0, 0.0)
    with pytest.raises(ValueError, match=re.escape(
            "`reference_groups` must pair with `groups` group by group. Received: 1 and 2 groups")):
        evaluation.stratified_bootstrap_interval(groups, groups[:1])
    with pytest.raises(ValueError, match=re.escape(
            "`groups[1]` must be a 1-D array of at least 2 finite numbers. Received: shape (1,)")):
        evaluation.stratified_bootstrap_interval([[1.0, 0.0], [1.0]])
