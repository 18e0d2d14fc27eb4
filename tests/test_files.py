"""`keras_subembed.files`: targets checked first, written atomically beside them, replaced
only when an export wrote them; staging left by a dead process removed, a live one's kept."""

import json
import os
import pathlib
import stat

import pytest

from keras_subembed import files


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


def test_a_file_target_is_refused_by_what_it_is_and_names_the_switch(tmp_path):
    target = tmp_path / "m.tflite"
    assert files.check_file_target(str(target), False, bool, "a .tflite file") == target
    target.write_text("x")
    with pytest.raises(FileExistsError, match=r"m\.tflite' exists; pass overwrite=True to replace"):
        files.check_file_target(target, False, bool, "a .tflite file")
    with pytest.raises(FileExistsError, match="exists; pass --overwrite to replace"):
        files.check_file_target(target, False, bool, "a .tflite file", flag="--overwrite")
    with pytest.raises(FileExistsError, match=r"exists and is not a \.tflite file; overwrite=True "
                                              r"only replaces what an export wrote"):
        files.check_file_target(target, True, lambda path: False, "a .tflite file")
    assert files.check_file_target(target, True, lambda path: True, "a .tflite file") == target
    with pytest.raises(ValueError, match=r"m\.tflite' would replace the input"):
        files.check_file_target(target, True, lambda path: True, "a .tflite file", keep=[target])
    with pytest.raises(FileNotFoundError, match=r"The folder of .*missing/m\.tflite' does not exist"):
        files.check_file_target(tmp_path / "missing" / "m.tflite", False, bool, "a .tflite file")
    assert target.read_text() == "x"


def test_two_outputs_may_not_share_a_path_or_hold_one_another(tmp_path):
    files.check_distinct([tmp_path / "a.tflite", tmp_path / "a.json", tmp_path / "saved"])
    with pytest.raises(ValueError, match=r"Two outputs go to the same path: .*a\.tflite'"):
        files.check_distinct([tmp_path / "a.tflite", tmp_path / "." / "a.tflite"])
    with pytest.raises(ValueError, match=r"The output .*saved/a\.json' lies inside the output "
                                         r"folder .*saved'"):
        files.check_distinct([tmp_path / "saved", tmp_path / "saved" / "a.json"])


def test_a_staged_folder_becomes_the_target_marked_ours_or_leaves_nothing(tmp_path):
    target = tmp_path / "saved"
    with files.staged_folder(target, overwrite=False) as staging:
        pathlib.Path(staging, "saved_model.pb").write_bytes(b"first")
    assert files.is_saved_model(target)
    assert json.loads((target / files.SAVED_MODEL_MARKER).read_text()) == {
        "written_by": files.WRITTEN_BY}
    with files.staged_folder(target, overwrite=True) as staging:
        pathlib.Path(staging, "saved_model.pb").write_bytes(b"second")
    assert (target / "saved_model.pb").read_bytes() == b"second"
    with pytest.raises(RuntimeError, match="the writer failed"):
        with files.staged_folder(tmp_path / "failed", overwrite=False):
            raise RuntimeError("the writer failed")
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["saved"]


def test_a_folder_holding_other_files_is_not_a_saved_model_an_export_wrote(tmp_path):
    folder = tmp_path / "saved"
    folder.mkdir()
    (folder / "saved_model.pb").write_bytes(b"pb")
    assert not files.is_saved_model(folder)  # no marker: not ours
    files.mark_saved_model(folder)
    assert files.is_saved_model(folder)
    (folder / "notes.txt").write_text("the user's")
    assert not files.is_saved_model(folder)  # an entry tf.saved_model.save never writes
    assert not files.is_saved_model(folder / "saved_model.pb")


def test_only_the_staging_of_dead_processes_is_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "process_is_alive", lambda pid: pid == 101)
    dead = tmp_path / ".m.tflite.partial-202-0123abcd"
    alive = tmp_path / ".m.tflite.partial-101-0123abcd"
    other_target = tmp_path / ".n.tflite.partial-202-0123abcd"
    not_staging = tmp_path / ".m.tflite.partial-202-xyz"
    for path in (alive, other_target, not_staging):
        path.write_bytes(b"")
    (dead / "saved_model").mkdir(parents=True)  # a scratch folder, removed whole
    files.remove_stale_staging(tmp_path / "m.tflite")
    assert sorted(entry.name for entry in tmp_path.iterdir()) == sorted(
        path.name for path in (alive, other_target, not_staging))


def test_a_scratch_folder_is_private_and_removed_after(tmp_path):
    scratch = files.staging_name(tmp_path / "m.tflite")
    assert scratch.name.startswith(f".m.tflite.partial-{os.getpid()}-")
    with files.scratch_folder(scratch) as folder:
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
        pathlib.Path(folder, "work").write_text("x")
    with files.scratch_folder() as temporary:
        assert os.path.isdir(temporary)
    assert not scratch.exists() and not os.path.exists(temporary)


def test_write_file_needs_a_proof_of_ownership_to_overwrite(tmp_path):
    with pytest.raises(TypeError, match=r"`write_file\(\.\.\., overwrite=True\)` needs `is_ours`"):
        files.write_file(tmp_path / "m.bin", b"x", True)
    assert files.write_file(tmp_path / "m.bin", b"x", False).read_bytes() == b"x"
    with pytest.raises(FileExistsError, match=r"m\.bin' appeared while exporting; it was kept"):
        files.write_file(tmp_path / "m.bin", b"y", False)
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["m.bin"]
