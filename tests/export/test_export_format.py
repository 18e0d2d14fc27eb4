"""`ExportFormat`'s targets: checked before converting, written atomically with normal
permissions, replaced only when an export wrote them (issue 12's data-loss cases)."""

import os
import pathlib
import re
import signal

import pytest

from keras_subembed import files
from keras_subembed.export import export_saved_model
from keras_subembed.export import export_tflite
from keras_subembed.export.litert import conversion
from tests.export.folders import contents

# The tests of what an export does around the conversion take `convert_each_model_once`
# (tests/export/conftest.py): each model converted once. The overwrite and killed-export
# tests convert every time: they test the conversion's output and its scratch folder.

# Export (SavedModel, TFLite) is TensorFlow's; from JAX it runs in a TensorFlow process.
pytestmark = pytest.mark.tensorflow_only(reason="export to SavedModel / TFLite")


def fail_if_converted(*args, **kwargs):
    raise AssertionError("the conversion ran before the target was checked")


def test_target_under_a_file_or_onto_a_folder_fails_before_converting(model, tmp_path,
                                                                      monkeypatch):
    monkeypatch.setattr(conversion, "convert", fail_if_converted)
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(NotADirectoryError, match="a_file' is a file, not a folder"):
        export_tflite(model, tmp_path / "a_file" / "m.tflite")
    (tmp_path / "a_folder").mkdir()
    with pytest.raises(IsADirectoryError, match="a_folder' is a folder"):
        export_tflite(model, tmp_path / "a_folder", overwrite=True)
    with pytest.raises(FileExistsError, match="is not a .tflite file"):
        export_tflite(model, tmp_path / "a_file", overwrite=True)
    assert (tmp_path / "a_file").read_text() == "x"


def test_file_appearing_during_the_export_is_kept(model, tmp_path, monkeypatch,
                                                  convert_each_model_once):
    target = tmp_path / "m.tflite"
    real_convert = conversion.convert

    def convert_while_someone_writes(*args, **kwargs):
        target.write_text("written meanwhile")
        return real_convert(*args, **kwargs)

    monkeypatch.setattr(conversion, "convert", convert_while_someone_writes)
    with pytest.raises(FileExistsError, match="appeared while exporting; it was kept"):
        export_tflite(model, target)
    assert target.read_text() == "written meanwhile"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.tflite"]


def test_outputs_get_the_permissions_of_a_normally_created_file(model, tmp_path,
                                                                convert_each_model_once):
    (tmp_path / "normal").write_text("")
    normal_mode = (tmp_path / "normal").stat().st_mode & 0o777
    report = export_tflite(model, tmp_path / "m.tflite")
    assert pathlib.Path(report.path).stat().st_mode & 0o777 == normal_mode
    folder = export_saved_model(model, tmp_path / "saved")
    (tmp_path / "normal_folder").mkdir()
    assert folder.stat().st_mode & 0o777 == (tmp_path / "normal_folder").stat().st_mode & 0o777


def test_overwrite_replaces_only_what_an_export_wrote(model, tmp_path):
    first = export_tflite(model, tmp_path / "m.tflite")
    second = export_tflite(model, tmp_path / "m.tflite", overwrite=True)
    assert second.file_bytes == first.file_bytes
    export_saved_model(model, tmp_path / "saved")
    export_saved_model(model, tmp_path / "saved", overwrite=True)
    assert files.is_saved_model(tmp_path / "saved")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.tflite", "saved"]


def test_overwrite_refuses_a_tflite_file_or_saved_model_it_did_not_write(model, tmp_path,
                                                                         convert_each_model_once):
    import tensorflow as tf

    foreign = tmp_path / "theirs.tflite"
    foreign.write_bytes(conversion.convert(model))  # a real flatbuffer, not from an export
    with pytest.raises(FileExistsError, match="theirs.tflite' exists and is not a .tflite file"):
        export_tflite(model, foreign, overwrite=True)
    theirs = tmp_path / "theirs_saved_model"
    tf.saved_model.save(tf.Module(), str(theirs))
    before = contents(theirs)
    with pytest.raises(FileExistsError, match="is not a SavedModel folder"):
        export_saved_model(model, theirs, overwrite=True)
    assert contents(theirs) == before
    assert files.is_tflite_file(export_tflite(model, tmp_path / "ours.tflite").path)
    assert files.is_saved_model(export_saved_model(model, tmp_path / "ours"))


def test_killed_tflite_export_leaves_its_scratch_beside_the_target(model, tmp_path,
                                                                   monkeypatch):
    def write_then_get_killed(model, directory, serving_inputs):
        pathlib.Path(directory).mkdir()
        os.kill(os.getpid(), signal.SIGKILL)

    monkeypatch.setattr(conversion, "write_saved_model", write_then_get_killed)
    child = os.fork()
    if child == 0:
        try:
            export_tflite(model, tmp_path / "m.tflite")
        finally:
            os._exit(1)
    _, status = os.waitpid(child, 0)
    assert os.WIFSIGNALED(status)
    (stale,) = tmp_path.iterdir()  # not in the system's temporary folder
    assert stale.name.startswith(".m.tflite.partial-")
    monkeypatch.undo()
    export_tflite(model, tmp_path / "m.tflite")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.tflite"]


@pytest.mark.parametrize("path", [None, 3, ""])
def test_a_path_that_is_not_a_path_is_named(model, path):
    message = re.escape(f"`path` must be a file path (str or os.PathLike). Received: path={path!r}")
    with pytest.raises(TypeError, match=message):
        export_tflite(model, path)
    with pytest.raises(TypeError, match=message):
        export_saved_model(model, path)


def test_a_users_file_put_at_the_target_during_an_overwriting_export_is_kept(
        model, tmp_path, monkeypatch, convert_each_model_once):
    """Issue 32 item 10: with overwrite=True the target was checked only at the start."""
    target = tmp_path / "m.tflite"
    real_convert = conversion.convert

    def convert_while_the_user_saves(*args, **kwargs):
        target.write_text("the user's file")
        return real_convert(*args, **kwargs)

    monkeypatch.setattr(conversion, "convert", convert_while_the_user_saves)
    with pytest.raises(FileExistsError, match="was replaced while exporting by a file an export "
                       "did not write; it was kept"):
        export_tflite(model, target, overwrite=True)
    assert target.read_text() == "the user's file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.tflite"]


@pytest.mark.parametrize("overwrite", ["False", 0, None])
def test_overwrite_that_is_not_a_bool_is_refused_before_any_work(model, tmp_path, monkeypatch,
                                                                  overwrite):
    """Issue 32 item 12: the string "False" counted as true."""
    monkeypatch.setattr(conversion, "convert", fail_if_converted)
    message = re.escape(f"`overwrite` must be a bool. Received: overwrite={overwrite!r}")
    for export_function in (export_tflite, export_saved_model):
        with pytest.raises(ValueError, match=message):
            export_function(model, tmp_path / "m", overwrite=overwrite)
    for write in (lambda: files.check_file_target(tmp_path / "m", overwrite, bool, "a file"),
                  lambda: files.write_file(tmp_path / "m", b"x", overwrite, bool)):
        with pytest.raises(ValueError, match=message):
            write()
    assert not list(tmp_path.iterdir())
