"""Product (shared, packed) codes through the pretrained path, export and the device runner."""

import pathlib
import subprocess
import sys

import keras
import keras_hub
import numpy as np
import pytest

from keras_subembed.assignment import product_codes
from keras_subembed.export import export_tflite
from keras_subembed.models import CompressedRobertaBackbone
from keras_subembed.models import CompressedRobertaMaskedLM
from keras_subembed.models import compress_backbone
from tests.export.conftest import VOCABULARY
from tests.tflite_utils import TFLiteRunner

pytestmark = pytest.mark.tensorflow_only(reason="it exports .tflite files")
ROOT = pathlib.Path(__file__).parents[2]
PRODUCT = {"assignment": "product", "num_tables": 8, "rows_per_table": 16, "reserved_ids": [0, 1, 2, 3, 4]}


def test_compressed_bert_with_packed_product_codes_exports_and_matches(tmp_path):
    keras.utils.set_random_seed(0)
    bert = keras_hub.models.BertBackbone(
        vocabulary_size=300, num_layers=1, num_heads=2, hidden_dim=32, intermediate_dim=64,
        max_sequence_length=32)
    student = compress_backbone(bert, "sub", PRODUCT)
    layer = student.token_embedding
    assert layer.pack_codes and layer.codes.shape == (300, 4) and not layer.distinct_codes
    np.testing.assert_array_equal(
        np.asarray(layer.embedding_table())[:5], np.asarray(bert.token_embedding.embeddings)[:5])
    token_ids = keras.Input((None,), dtype="int32", name="token_ids")
    padding_mask = keras.Input((None,), dtype="int32", name="padding_mask")
    states = student({"token_ids": token_ids, "padding_mask": padding_mask,
                      "segment_ids": keras.ops.zeros_like(token_ids)})["sequence_output"]
    encoder = keras.Model({"token_ids": token_ids, "padding_mask": padding_mask},
                          {"embedding": keras.ops.normalize(states[:, 0], axis=-1)})
    for quantization in (None, "dynamic"):
        path = tmp_path / f"encoder.{quantization}.tflite"
        report = export_tflite(encoder, path, quantization=quantization)  # verified against Keras
        assert report.max_abs_error < (1e-4 if quantization is None else 0.1)
    ids = np.random.default_rng(0).integers(0, 300, size=(2, 9)).astype("int32")
    runner = TFLiteRunner((tmp_path / "encoder.None.tflite").read_bytes())
    got = runner.runner(token_ids=ids, padding_mask=np.ones_like(ids))["embedding"]
    want = encoder({"token_ids": ids, "padding_mask": np.ones_like(ids)})["embedding"]
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_device_runner_predicts_masks_with_a_product_coded_masked_lm(tmp_path):
    vocab, width = len(VOCABULARY), 32
    table = np.random.default_rng(1).normal(size=(vocab, width)).astype("float32")
    codes = product_codes(table, num_tables=8, rows_per_table=16, reserved_ids=[0, 1, 2, 3, 4])
    keras.utils.set_random_seed(0)
    backbone = CompressedRobertaBackbone(
        vocab, num_layers=1, num_heads=2, hidden_dim=width, intermediate_dim=64,
        max_sequence_length=16, embedding="sub",
        embedding_kwargs={"assignment": codes, "distinct_codes": False, "reserved_ids": [0, 1, 2, 3, 4]})
    assert backbone.token_embedding.pack_codes
    path = tmp_path / "mlm.tflite"
    export_tflite(CompressedRobertaMaskedLM(backbone), path)
    (tmp_path / "mlm.vocab.txt").write_text("\n".join(VOCABULARY) + "\n", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(ROOT / "device" / "run_tflite.py"), str(path),
         "the police said the [MASK] was closed .", "--top-k", "3", "--runs", "0"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "tokens: [CLS] the police said the [MASK] was closed . [SEP]" in result.stdout
    (guesses,) = [line for line in result.stdout.splitlines() if line.startswith("[MASK] at 5: ")]
    assert guesses.count("(") == 3
