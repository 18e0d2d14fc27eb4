"""`shrink`'s output folder: replaced only with overwrite, never a folder of the user's files."""

import pytest

from keras_subembed.recipe.shrink import check_output


def test_a_shrink_folder_is_replaced_only_with_overwrite(tmp_path):
    output = check_output(tmp_path / "out", overwrite=False)
    (output / "report.json").write_text("{}")
    with pytest.raises(FileExistsError, match="pass overwrite=True"):
        check_output(output, overwrite=False)
    assert check_output(output, overwrite=True) == output
    with pytest.raises(ValueError, match="`overwrite` must be a bool"):
        check_output(output, overwrite="yes")


def test_shrink_never_writes_into_a_folder_of_the_users_files(tmp_path):
    from keras_subembed.recipe import shrink

    (tmp_path / "results.json").write_text("mine")
    for overwrite in (False, True):
        with pytest.raises(FileExistsError, match="no shrink wrote it"):
            shrink("multilingual-e5-small", tmp_path, overwrite=overwrite, verbose=0)
    assert (tmp_path / "results.json").read_text() == "mine"
