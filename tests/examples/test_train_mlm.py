import json
import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest

import keras_subembed  # registers the classes for load_model
from keras_subembed.datasets import lee_documents

ROOT = pathlib.Path(__file__).parents[2]
pytestmark = pytest.mark.large
# Every embedding's branch of the script runs on TensorFlow. On JAX two do
# (the dense baseline the table compares with, and a compressed one): each
# kind's own training on JAX is tests/models/families/test_compressed_roberta_backbone.py's.
EMBEDDINGS = (["embedding", "sub-digits", "alone", "define"] if keras.backend.backend() == "tensorflow"
              else ["embedding", "sub-digits"])


def test_train_mlm_runs_end_to_end_and_writes_models_json_and_plot(tmp_path):
    """The script at toy size, on the real Lee corpus with a vocabulary trained on it."""
    # Its first 90 documents: training the WordPiece vocabulary on all 300 took 47 s,
    # on these 17 s.
    (tmp_path / "lee90.cor").write_text("\n".join(lee_documents()[:90]), encoding="utf-8")
    command = [
        sys.executable, str(ROOT / "examples" / "train_mlm.py"), "--corpus", str(tmp_path / "lee90.cor"),
        "--embeddings", *EMBEDDINGS,
        "--steps", "4", "--eval-every", "2", "--batch-size", "4", "--sequence-length", "32",
        "--num-layers", "1", "--hidden-dim", "32", "--num-heads", "2", "--intermediate-dim", "64",
        "--vocabulary", "corpus", "--vocabulary-size", "2000", "--no-xla", "--output-dir", str(tmp_path),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "| embedding | embedding params |" in result.stdout
    summary = json.loads((tmp_path / "results.json").read_text())
    rows = {row["embedding"]: row for row in summary["results"]}
    assert list(rows) == EMBEDDINGS
    vocabulary_size = rows["embedding"]["embedding_params"] // 32
    assert 400 < vocabulary_size <= 2000
    for name, row in rows.items():
        assert len(row["curve"]) == 2 and row["steps"] == 4
        assert np.isfinite(row["heldout_loss"]) and 0 <= row["heldout_accuracy"] <= 1
        assert row["tokens_per_second"] > 0
        model = keras.saving.load_model(row["model"])
        assert type(model) is keras_subembed.models.CompressedRobertaMaskedLM
        assert model.backbone.embedding_kind == {"sub-digits": "sub"}.get(name, name)
        assert model.preprocessor.tokenizer.vocabulary_size() == vocabulary_size
    # About 550 tokens from 90 documents: the dense table is 17,568 numbers, 3,200 here.
    assert rows["sub-digits"]["embedding_params"] < rows["embedding"]["embedding_params"] / 5
    assert (tmp_path / "mlm_results.png").stat().st_size > 10_000
