"""`keras-subembed-convert` (export/cli.py): every output checked before any is written;
no output is the input, nothing arbitrary is replaced (issue 12's data-loss cases)."""

import pytest

from keras_subembed.export import export_saved_model
from keras_subembed.export.cli import main as convert_main
from tests.export.folders import contents

# Export (SavedModel, TFLite) is TensorFlow's; from JAX it runs in a TensorFlow process.
pytestmark = pytest.mark.tensorflow_only(reason="export to SavedModel / TFLite")


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


def test_cli_checks_every_output_before_writing_any(saved_masked_lm, tmp_path, capsys):
    saved = tmp_path / "sm"
    export_saved_model(saved_masked_lm, saved)
    before = contents(tmp_path)
    assert convert_main([str(saved_masked_lm), "--tflite", str(saved / "x.tflite"),
                         "--saved-model", str(saved), "--overwrite"]) == 2
    assert "x.tflite' lies inside the output folder" in capsys.readouterr().err
    assert contents(tmp_path) == before
