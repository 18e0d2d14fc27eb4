import json
import pathlib
import re
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_subembed.export import ExportVerificationError
from keras_subembed.export import UnsupportedOpError
from keras_subembed.export import export_saved_model
from keras_subembed.export import export_tflite
from keras_subembed.export.cli import main as convert_main
from keras_subembed.export.litert import conversion
from keras_subembed.export.tflite.tflite_format import TFLiteFormat
from keras_subembed.export.signature import ServingInputs
from keras_subembed.export.signature import make_sample_inputs
from keras_subembed.models import CompressedRobertaBackbone
from keras_subembed.models import CompressedRobertaMaskedLM
from tests.export.conftest import VOCABULARY
from tests.export.conftest import masked_lm as build_masked_lm

ROOT = pathlib.Path(__file__).parents[3]
VOCAB = 30_522
WIDTH = 32
KINDS = {
    "embedding": {},
    "sub": dict(num_tables=3, reserved_ids=[0, 100, 101, 102, 103]),
    "alone": dict(seed=1, ffn_dim=48),
    "define": dict(map_dim=16, expand_dim=64, depth=2),
}


def masked_lm(kind):
    return build_masked_lm(kind, VOCAB, width=WIDTH, **KINDS[kind])


@pytest.fixture(scope="module")
def models():
    return {kind: masked_lm(kind) for kind in KINDS}


# --- TFLite: each kind, parity, sizes ------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_converts_builtins_only_and_matches_keras(kind, models, tmp_path):
    report = export_tflite(models[kind], tmp_path / "m.tflite", latency_runs=3)
    assert pathlib.Path(report.path).stat().st_size == report.file_bytes
    assert report.max_abs_error <= report.tolerance <= 1e-4 * max(1, 1e3)
    assert report.verified_sequence_lengths == (16, 64)  # dynamic sequence length
    assert report.latency_ms > 0 and report.latency_sequence_length == 64
    assert sorted(report.inputs) == ["mask_positions", "padding_mask", "token_ids"]
    assert report.outputs == ("outputs",)
    assert "GATHER" in report.ops and not any(op.startswith("CUSTOM") for op in report.ops)
    assert report.dense_embedding_bytes == 4 * VOCAB * WIDTH
    table_bytes = VOCAB * WIDTH * 4
    if kind == "embedding":
        assert report.embedding_bytes >= table_bytes
    else:  # no V x d constant anywhere
        assert report.file_bytes < table_bytes
    values = json.loads(report.to_json())
    assert values["embedding_share"] == pytest.approx(report.embedding_bytes / report.file_bytes)
    assert "max abs error" in str(report)


def test_sub_embedding_file_holds_only_its_tables_and_uint8_codes(tmp_path):
    codes = np.random.default_rng(0).permutation(40**3)[:VOCAB]
    codes = np.stack([codes % 40, codes // 40 % 40, codes // 1600], axis=1)
    backbone = CompressedRobertaBackbone(
        VOCAB, num_layers=1, num_heads=2, hidden_dim=WIDTH, intermediate_dim=64,
        max_sequence_length=64, embedding="sub", embedding_kwargs=dict(assignment=codes))
    report = export_tflite(CompressedRobertaMaskedLM(backbone), tmp_path / "m.tflite")
    tables = 40 * WIDTH * 4
    # codes stored once as uint8 (V x 3 bytes), not folded into int32 copies
    assert report.embedding_bytes <= VOCAB * 3 + 2 * tables + 1024, report


def test_alone_and_define_compressed_vs_frozen(models, tmp_path):
    for kind in ("alone", "define"):
        small = export_tflite(models[kind], tmp_path / f"{kind}_c.tflite")
        fast = export_tflite(models[kind], tmp_path / f"{kind}_f.tflite", embedding_mode="frozen")
        assert fast.embedding_bytes >= VOCAB * WIDTH * 4 > small.embedding_bytes
        assert small.file_bytes < fast.file_bytes
        assert fast.embedding_mode == "frozen" and fast.max_abs_error <= fast.tolerance
    assert not models["alone"].backbone.token_embedding.cached  # the caller's model is untouched


def test_dynamic_range_quantization_is_smaller_and_within_its_bound(models, tmp_path):
    full = export_tflite(models["sub"], tmp_path / "f.tflite")
    dynamic = export_tflite(models["sub"], tmp_path / "d.tflite", quantization="dynamic")
    assert full.latency_ms is None and "not measured (latency_runs=0)" in str(full)  # opt-in
    assert dynamic.file_bytes < 0.8 * full.file_bytes  # the V-sized head bias stays float
    assert dynamic.quantization == "dynamic" and dynamic.max_abs_error <= dynamic.tolerance


def test_failed_verification_writes_nothing(models, tmp_path, monkeypatch):
    monkeypatch.setitem(TFLiteFormat.tolerances, "dynamic", 1e-9)
    with pytest.raises(ExportVerificationError, match="'outputs' differs from Keras by up to"):
        export_tflite(models["sub"], tmp_path / "d.tflite", quantization="dynamic")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["sub", "embedding"])
def test_dynamic_range_verification_refuses_a_file_with_a_noisy_token_table(kind, models, tmp_path,
                                                                        monkeypatch):
    """Issue 20 item 11: a fixed 10% tolerance let a wrong table pass (cosine 0.99)."""
    from tests.export.conftest import convert_a_noisy_copy

    model = models[kind]
    genuine = export_tflite(model, tmp_path / "genuine.tflite", quantization="dynamic")
    assert genuine.max_abs_error <= genuine.tolerance < 0.1 * max(1.0, genuine.max_abs_error)
    convert_a_noisy_copy(monkeypatch, conversion, model)
    with pytest.raises(ExportVerificationError, match="differs from Keras by up to"):
        export_tflite(model, tmp_path / "noisy.tflite", quantization="dynamic")
    assert not (tmp_path / "noisy.tflite").exists()


# --- SavedModel --------------------------------------------------------------------------


def test_saved_model_signature_has_named_dynamic_inputs(models, tmp_path):
    path = export_saved_model(models["sub"], tmp_path / "saved")
    loaded = tf.saved_model.load(str(path))
    signature = loaded.signatures["serving_default"]
    specs = signature.structured_input_signature[1]
    assert sorted(specs) == ["mask_positions", "padding_mask", "token_ids"]
    assert all(spec.shape.as_list() == [None, None] for spec in specs.values())
    inputs = make_sample_inputs(models["sub"], ServingInputs.of(models["sub"]), [9, 33])
    for sample in inputs:
        got = signature(**{k: tf.constant(v) for k, v in sample.items()})["outputs"]
        np.testing.assert_allclose(got, models["sub"](sample), rtol=1e-5, atol=1e-5)
    with pytest.raises(FileExistsError, match="exists; pass overwrite=True"):
        export_saved_model(models["sub"], path)
    export_saved_model(models["sub"], path, overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["saved"]  # no staging left behind


# --- errors ------------------------------------------------------------------------------


def test_bad_arguments_raise_clear_errors(models, tmp_path):
    with pytest.raises(ValueError, match=re.escape(
            "`quantization` must be one of (None, 'dynamic', 'float16', 'int8', "
            "'int4_blockwise32_dynamic', 'int4_blockwise32_dynamic_int8_attention_output', "
            "'int4_dynamic', 'int4_dynamic_int8_feedforward_output', 'int4_weight_only', "
            "'int8_weight_only'). Received: quantization='int4'")):
        export_tflite(models["sub"], tmp_path / "m.tflite", quantization="int4")
    with pytest.raises(ValueError, match="needs a `representative_dataset`"):
        export_tflite(models["sub"], tmp_path / "m.tflite", quantization="int8")
    with pytest.raises(ValueError, match=re.escape("`embedding_mode` must be one of ('compressed', "
                                                   "'frozen'). Received: embedding_mode='fast'")):
        export_tflite(models["sub"], tmp_path / "m.tflite", embedding_mode="fast")
    with pytest.raises(FileNotFoundError, match="No model file at `model='/no/such.keras'`"):
        export_tflite("/no/such.keras", tmp_path / "m.tflite")
    garbage = tmp_path / "broken.keras"
    garbage.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="Could not read a Keras model from .*not a complete"):
        export_tflite(garbage, tmp_path / "m.tflite")
    with pytest.raises(ValueError, match="`sequence_lengths` must be a non-empty list of positive"):
        export_tflite(models["sub"], tmp_path / "m.tflite", sequence_lengths=(16, 0))
    with pytest.raises(ValueError, match="`latency_runs` must be an integer >= 0"):
        export_tflite(models["sub"], tmp_path / "m.tflite", latency_runs=-1)
    with pytest.raises(TypeError, match="`model` must be a keras.Model or a path"):
        export_tflite(42, tmp_path / "m.tflite")
    (tmp_path / "exists.tflite").write_bytes(b"old")
    with pytest.raises(FileExistsError, match="exists; pass overwrite=True"):
        export_tflite(models["sub"], tmp_path / "exists.tflite")
    assert (tmp_path / "exists.tflite").read_bytes() == b"old"


class Erfinv(keras.layers.Layer):
    def call(self, x):
        return keras.ops.erfinv(x)


def test_non_builtin_op_is_refused_naming_the_op_and_layer(tmp_path):
    inputs = keras.Input((4,))
    model = keras.Model(inputs, Erfinv(name="inverse_error_function")(inputs))
    with pytest.raises(UnsupportedOpError, match=r"tf\.Erfinv.*inverse_error_function.*not TFLite builtins"):
        export_tflite(model, tmp_path / "m.tflite", sample_inputs=[np.zeros((2, 4), "float32")])
    assert not (tmp_path / "m.tflite").exists()


# --- command line and on-device runner ----------------------------------------------------


def test_convert_command_and_litert_only_runner(saved_masked_lm, tmp_path, capsys):
    vocabulary = VOCABULARY
    tflite = tmp_path / "mlm.tflite"
    assert convert_main([str(saved_masked_lm), "--tflite", str(tflite),
                         "--saved-model", str(tmp_path / "saved"), "--json", str(tmp_path / "r.json")]) == 0
    printed = capsys.readouterr().out
    assert "embedding bytes" in printed and "wrote SavedModel" in printed
    assert (tmp_path / "mlm.vocab.txt").read_text().split() == vocabulary
    assert json.loads((tmp_path / "r.json").read_text())["file_bytes"] == tflite.stat().st_size
    assert convert_main([str(saved_masked_lm), "--tflite", str(tflite)]) == 2
    assert "exists; pass --overwrite to replace it" in capsys.readouterr().err

    # What an app runs: no TensorFlow, no Keras importable.
    blocker = "import sys; sys.modules.update(tensorflow=None, keras=None, keras_hub=None); "
    runner = f"import runpy; sys.argv = {[str(ROOT / 'device' / 'run_tflite.py'), str(tflite), 'the police [MASK] was closed', '--runs', '3']!r}; runpy.run_path(sys.argv[0], run_name='__main__')"
    result = subprocess.run([sys.executable, "-c", blocker + runner], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "tokens: [CLS] the police [MASK] was closed [SEP]" in result.stdout
    assert re.search(r"\[MASK\] at 3: \S+ \(\d\.\d\d\)", result.stdout)
    assert "latency: median" in result.stdout


# Export (SavedModel, TFLite) is TensorFlow's; from JAX it runs in a TensorFlow process.
pytestmark = [pytest.mark.tensorflow_only(reason="export to SavedModel / TFLite"),
              pytest.mark.usefixtures("convert_each_model_once")]
