"""`python -m keras_subembed shrink` (recipe/cli.py): every flag checked before any work,
every flag explained."""

import pathlib
import subprocess
import sys

import pytest

from keras_subembed.evaluation.language_report import write_language_report
from keras_subembed.recipe import cli
from tests.evaluation.test_language_report import ROWS

ROOT = pathlib.Path(__file__).parents[2]


@pytest.mark.parametrize("flag, value", [
    ("--steps", "-1"), ("--embedding-steps", "-1"), ("--runs", "0"), ("--batch-size", "0"),
    ("--batch-size", "3"), ("--sequence-length", "1"), ("--learning-rate", "nan"),
    ("--learning-rate", "0"), ("--embedding-learning-rate", "inf"),
    ("--pair-loss-weight", "nan"), ("--pair-temperature", "0"),
    ("--sentence-loss-weight", "-5"), ("--budget-mb", "0"), ("--budget-mb", "nan"),
    ("--mediapipe-length", "2"), ("--quantization", "bogus"), ("--setting", "bogus"),
    ("--training-pairs", "-1"), ("--pair-sampling-alpha", "1.5"), ("--messages", "0"),
    ("--held-out-per-language", "0"), ("--training-per-language", "x"), ("--seed", "-1"),
    ("--formats", "pdf"), ("--compare", "no-such-shrink"),
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


def test_compare_takes_only_shrinks_judged_by_retrieval_and_a_shrink_records_its_command(
        tmp_path, capsys, monkeypatch):
    cosine_only = [{key: value for key, value in made.items() if key != "english_to_locale"}
                   for made in ROWS[:2]]
    write_language_report(cosine_only, tmp_path / "english")
    with pytest.raises(SystemExit) as raised:
        cli.main(["shrink", "--output", str(tmp_path / "out"), "--compare",
                  str(tmp_path / "english")])
    assert raised.value.code == 2
    assert "has no English -> locale retrieval" in capsys.readouterr().err
    write_language_report(ROWS, tmp_path / "b20")
    calls = []

    def fake_shrink(**arguments):  # the command line's own work, not a model's
        calls.append(arguments)
        pathlib.Path(arguments["output"]).mkdir()
        return "a result"

    monkeypatch.setattr(cli, "shrink", fake_shrink)
    argv = ["shrink", "--output", str(tmp_path / "out"), "--budget-mb", "20", "--compare",
            str(tmp_path / "b20")]
    assert cli.main(argv) == 0
    assert calls[0]["compare"] == [tmp_path / "b20"] and calls[0]["budget_mb"] == 20.0
    assert (tmp_path / "out" / "command.txt").read_text() == (
        f"python -m keras_subembed shrink --output {tmp_path / 'out'} --budget-mb 20 "
        f"--compare {tmp_path / 'b20'}\n")
