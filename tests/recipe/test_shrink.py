"""`shrink` and its command line end to end, on a tiny SentencePiece model made here."""

import pathlib
import subprocess
import sys

import pytest

from keras_subembed.recipe import cli
from keras_subembed.recipe.shrink import check_output

ROOT = pathlib.Path(__file__).parents[2]


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


@pytest.mark.parametrize("flag, value", [
    ("--steps", "-1"), ("--embedding-steps", "-1"), ("--runs", "0"), ("--batch-size", "0"),
    ("--batch-size", "3"), ("--sequence-length", "1"), ("--learning-rate", "nan"),
    ("--learning-rate", "0"), ("--embedding-learning-rate", "inf"),
    ("--pair-loss-weight", "nan"), ("--pair-temperature", "0"),
    ("--sentence-loss-weight", "-5"), ("--budget-mb", "0"), ("--budget-mb", "nan"),
    ("--mediapipe-length", "2"), ("--quantization", "bogus"), ("--setting", "bogus"),
    ("--training-pairs", "-1"), ("--pair-sampling-alpha", "1.5"), ("--messages", "0"),
    ("--held-out-per-language", "0"), ("--training-per-language", "x"), ("--seed", "-1"),
    ("--formats", "pdf"),
])
def test_every_bad_flag_is_refused_before_any_work(flag, value, capsys, tmp_path):
    with pytest.raises(SystemExit) as raised:
        cli.main(["shrink", "--output", str(tmp_path / "out"), flag, value])
    assert raised.value.code == 2
    assert flag in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_module_runs_as_a_command_and_explains_every_flag():
    completed = subprocess.run([sys.executable, "-m", "keras_subembed", "shrink", "--help"],
                               capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert completed.returncode == 0, completed.stderr
    text = completed.stdout
    for action in cli.parser()._subparsers._group_actions[0].choices["shrink"]._actions:
        if action.option_strings and action.dest != "help":
            assert action.help, f"{action.option_strings} has no help"
            assert action.option_strings[0] in text
