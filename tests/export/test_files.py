"""Files are never lost: issue 12's data-loss cases, each reproduced."""

import json
import re
import os
import pathlib
import signal
import subprocess

import keras
import pytest

from keras_subembed.export import export_saved_model
from keras_subembed.export import export_tflite
from keras_subembed import files
from keras_subembed.export import saved_model as saved_model_module
from keras_subembed.export.litert import conversion
from keras_subembed.export.cli import main as convert_main


@pytest.fixture(scope="module")
def model():
    token_ids = keras.Input((None,), dtype="int32", name="token_ids")
    vectors = keras.layers.Embedding(20, 4)(token_ids)
    return keras.Model(token_ids, keras.layers.GlobalAveragePooling1D()(vectors))


def contents(folder):
    return {path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(pathlib.Path(folder).rglob("*")) if path.is_file()}


def dead_pid():
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def fail_if_converted(*args, **kwargs):
    raise AssertionError("the conversion ran before the target was checked")


# The tests of what an export does around the conversion take `convert_each_model_once`
# (tests/export/conftest.py): each model converted once. The overwrite and killed-export
# tests convert every time: they test the conversion's output and its scratch folder.


# --- the command line: no output is the input, nothing arbitrary is replaced --------


def test_json_report_never_replaces_the_input_or_another_file(saved_masked_lm, tmp_path, capsys):
    original = saved_masked_lm.read_bytes()
    assert convert_main([str(saved_masked_lm), "--tflite", str(tmp_path / "k.tflite"),
                         "--json", str(saved_masked_lm), "--overwrite"]) == 2
    assert "would replace the input" in capsys.readouterr().err
    assert saved_masked_lm.read_bytes() == original
    victim = tmp_path / "victim.keras"
    victim.write_bytes(b"someone's model")
    assert convert_main([str(saved_masked_lm), "--tflite", str(tmp_path / "k.tflite"),
                         "--json", str(victim)]) == 2
    # The command line names its flag, not the Python argument.
    assert "exists; pass --overwrite to replace it" in capsys.readouterr().err
    assert convert_main([str(saved_masked_lm), "--tflite", str(tmp_path / "k.tflite"),
                         "--json", str(victim), "--overwrite"]) == 2
    assert "is not a JSON export report; --overwrite only replaces" in capsys.readouterr().err
    assert victim.read_bytes() == b"someone's model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["victim.keras"]  # nothing written


def test_saved_model_overwrite_never_deletes_a_folder_it_did_not_write(
        saved_masked_lm, tmp_path, monkeypatch, capsys):
    work = tmp_path / "work"
    (work / "results").mkdir(parents=True)
    (work / "results" / "notes.txt").write_text("keep me")
    (work / "data.csv").write_text("1,2")
    before = contents(tmp_path)
    monkeypatch.chdir(work)
    assert convert_main([str(saved_masked_lm), "--saved-model", ".", "--overwrite"]) == 2
    assert "current folder or one of its parents" in capsys.readouterr().err
    assert convert_main([str(saved_masked_lm), "--saved-model", "..", "--overwrite"]) == 2
    assert convert_main([str(saved_masked_lm), "--saved-model", "results", "--overwrite"]) == 2
    assert "is not a SavedModel folder" in capsys.readouterr().err
    assert contents(tmp_path) == before


def test_stale_vocabulary_stops_the_command_before_it_writes_anything(
        saved_masked_lm, tmp_path, capsys):
    (tmp_path / "mlm.vocab.txt").write_text("old\n")
    assert convert_main([str(saved_masked_lm), "--tflite", str(tmp_path / "mlm.tflite")]) == 2
    assert "mlm.vocab.txt' exists" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mlm.vocab.txt"]


def test_truncated_keras_file_is_named_as_such(saved_masked_lm, tmp_path, capsys):
    truncated = tmp_path / "cut.keras"
    data = saved_masked_lm.read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    assert convert_main([str(truncated), "--tflite", str(tmp_path / "m.tflite")]) == 2
    error = capsys.readouterr().err
    assert "not a complete .keras (zip) file; it may be truncated" in error
    assert "File not found" not in error


# --- the library: targets checked first, atomic, normal permissions -----------------


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


def test_killed_saved_model_export_leaves_staging_the_next_run_removes(model, tmp_path,
                                                                       monkeypatch):
    def write_then_get_killed(model, directory, serving_inputs):
        (pathlib.Path(directory) / "saved_model.pb").write_bytes(b"half")
        os.kill(os.getpid(), signal.SIGKILL)

    monkeypatch.setattr(saved_model_module, "write_saved_model", write_then_get_killed)
    child = os.fork()
    if child == 0:  # the export that gets killed
        try:
            export_saved_model(model, tmp_path / "saved")
        finally:
            os._exit(1)
    _, status = os.waitpid(child, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    (stale,) = tmp_path.iterdir()
    assert stale.name.startswith(".saved.partial-")
    (tmp_path / f".m.tflite.partial-{dead_pid()}-0123abcd").write_bytes(b"killed")
    monkeypatch.undo()
    export_saved_model(model, tmp_path / "saved")
    export_tflite(model, tmp_path / "m.tflite")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.tflite", "saved"]


def test_staging_of_a_running_export_is_left_alone(tmp_path):
    running = tmp_path / f".m.tflite.partial-{os.getpid()}-0123abcd"
    running.write_bytes(b"in progress")
    other = tmp_path / ".m.tflite.partial-notes"
    other.write_bytes(b"not ours")
    files.write_file(tmp_path / "m.tflite", b"data", overwrite=False)
    assert running.exists() and other.exists()


def test_json_report_is_recognised_for_overwrite(tmp_path):
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"file_bytes": 1, "ops": [], "written_by": files.WRITTEN_BY}))
    assert files.is_json_report(report)
    # Of the right kind is not enough: only what an export wrote counts.
    report.write_text(json.dumps({"file_bytes": 1, "ops": []}))
    assert not files.is_json_report(report)
    report.write_text(json.dumps([1, 2]))
    assert not files.is_json_report(report)


# --- issue 20: overwrite replaces only what this package wrote, proven by its content --


def test_cli_overwrite_keeps_a_vocabulary_it_did_not_write(saved_masked_lm, tmp_path, capsys,
                                                           convert_each_model_once):
    diary = tmp_path / "diary.vocab.txt"
    diary.write_text("dear diary\ntoday I exported a model\n")
    assert convert_main([str(saved_masked_lm), "--tflite", str(tmp_path / "diary.tflite"),
                         "--overwrite", "--no-verify"]) == 2
    assert ("diary.vocab.txt' exists and is not the vocabulary of the .tflite file an "
            "export wrote there") in capsys.readouterr().err
    assert diary.read_text() == "dear diary\ntoday I exported a model\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["diary.vocab.txt"]
    # What the command wrote itself it may replace.
    diary.unlink()
    for _ in range(2):
        assert convert_main([str(saved_masked_lm), "--tflite", str(tmp_path / "diary.tflite"),
                             "--overwrite", "--no-verify"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["diary.tflite", "diary.vocab.txt"]


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


def test_cli_checks_every_output_before_writing_any(saved_masked_lm, tmp_path, capsys):
    saved = tmp_path / "sm"
    export_saved_model(saved_masked_lm, saved)
    before = contents(tmp_path)
    assert convert_main([str(saved_masked_lm), "--tflite", str(saved / "x.tflite"),
                         "--saved-model", str(saved), "--overwrite"]) == 2
    assert "x.tflite' lies inside the output folder" in capsys.readouterr().err
    assert contents(tmp_path) == before


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


# Export (SavedModel, TFLite) is TensorFlow's; from JAX it runs in a TensorFlow process.
pytestmark = pytest.mark.tensorflow_only(reason="export to SavedModel / TFLite")


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


def test_every_writer_rechecks_the_target_at_the_replace(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("the user's notes")
    with pytest.raises(FileExistsError, match="it was kept"):
        files.write_file(target, b"{}", True, files.is_json_report)
    assert target.read_text() == "the user's notes"
    target.write_text('{"written_by": "keras_subembed.export"}')
    files.write_file(target, b'{"written_by": "keras_subembed.export", "new": 1}', True,
                     files.is_json_report)
    assert json.loads(target.read_text())["new"] == 1


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
