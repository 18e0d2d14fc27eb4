"""`keras_subembed.files`: targets checked first, written atomically beside them, replaced
only when an export wrote them; staging left by a dead process removed, a live one's kept."""

import json
import os

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

