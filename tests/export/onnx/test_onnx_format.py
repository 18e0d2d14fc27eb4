"""A compressed BERT embedder ships as a verified `.onnx` file, float32, int8 and int4, from either backend."""

import importlib.util
import re
import sys
from pathlib import Path

import keras
import numpy as np
import pytest

import keras_subembed
from keras_subembed.export import export_onnx
from keras_subembed.export.onnx.onnx_format import ONNXFormat

sys.path.insert(0, str(Path(__file__).parents[2] / "models" / "families"))
from test_compressed_text_embedder import SUB  # noqa: E402
from test_compressed_text_embedder import TEXTS  # noqa: E402
from test_compressed_text_embedder import make_bert_embedder  # noqa: E402

# find_spec, not an import: importing tf2onnx would import TensorFlow into a JAX run.
MISSING = [name for name in ("onnx", "onnxruntime", "tf2onnx") if importlib.util.find_spec(name) is None]
pytestmark = [pytest.mark.skipif(bool(MISSING), reason=f"not installed: {MISSING}"),
              pytest.mark.usefixtures("convert_each_model_once")]


@pytest.fixture(scope="module")
def small():
    return keras_subembed.compress(make_bert_embedder("mean"), "sub", SUB)


# On JAX the export runs in a TensorFlow process whatever the quantization: the
# float file covers that path there, the int8 and int4 ones (ONNX Runtime's
# quantizers, the same code in that process) are tested once, on TensorFlow.
QUANTIZED_ONCE = pytest.mark.tensorflow_only(
    reason="the same TensorFlow-process export as the float file on JAX; quantized once")
QUANTIZED_OPS = {"dynamic": "MatMulInteger", "int4": "MatMulNBits"}


@pytest.mark.parametrize("quantization", [None] + [
    pytest.param(name, marks=QUANTIZED_ONCE) for name in QUANTIZED_OPS])
def test_the_onnx_file_gives_the_keras_vectors_in_onnx_runtime(small, tmp_path, quantization):
    import onnxruntime

    path = tmp_path / "small.onnx"
    report = export_onnx(small, path, quantization=quantization)
    assert (report.inputs, report.outputs) == (("token_ids", "padding_mask"), ("embedding",))
    assert report.verified_sequence_lengths == (16, 24)  # dynamic length, one file
    assert report.cosine_to_float > (0.9999 if quantization is None else 0.999)
    if quantization:
        # Every transformer kernel (2 layers x q, k, v, output, 2 feed-forward) in ONNX
        # Runtime's integer kernels.
        assert QUANTIZED_OPS[quantization] in report.ops and report.quantized_ops == 12
    # The caller's own session, on the preprocessor's features, against this backend's model.
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    features = small.preprocessor(TEXTS)
    got = session.run(["embedding"], {
        "token_ids": np.asarray(features["token_ids"], "int32"),
        "padding_mask": np.asarray(features["padding_mask"], "int32")})[0]
    want = keras.ops.convert_to_numpy(small.encode_text(TEXTS, verbose=0))
    np.testing.assert_allclose(got, want, atol=1e-5 if quantization is None else 2e-2)
    with pytest.raises(FileExistsError):
        export_onnx(small, path, verify=False)


# The file checks run before any conversion, the same on every backend; on
# JAX each export is a TensorFlow subprocess, so they run once, here.
@pytest.mark.tensorflow_only(reason="backend-neutral file checks, tested once")
def test_overwrite_replaces_our_file_and_never_a_foreign_one(small, tmp_path):
    ours = tmp_path / "ours.onnx"
    export_onnx(small, ours, verify=False)
    export_onnx(small, ours, verify=False, overwrite=True)
    foreign = tmp_path / "theirs.onnx"
    foreign.write_bytes(b"not ours")
    with pytest.raises(FileExistsError):
        export_onnx(small, foreign, overwrite=True, verify=False)
    assert foreign.read_bytes() == b"not ours"


@QUANTIZED_ONCE
def test_the_int4_file_is_the_smallest_and_keeps_the_embedding_integer(small, tmp_path):
    reports = {quantization: export_onnx(small, tmp_path / f"{quantization}.onnx",
                                         quantization=quantization, verify=quantization == "int4")
               for quantization in (None, "dynamic", "int4")}
    int4 = reports["int4"]
    assert int4.file_bytes < reports["dynamic"].file_bytes and int4.file_bytes < reports[None].file_bytes
    # Held to Keras with ONNX Runtime's own int4 rounding: the file computes just that.
    assert int4.max_abs_error <= int4.tolerance < 0.01
    weights = {name: report.constant_bytes for name, report in reports.items()}
    assert weights["int4"]["int4"] < weights["dynamic"]["int8"]
    # The product codes are gathered, never multiplied: uint8 as Keras stores them,
    # and no float copy of the V x d table.
    codes = small.backbone.token_embedding.codes
    assert weights["int4"]["uint8"] == weights[None]["uint8"] == codes.shape[0] * codes.shape[1]
    assert weights["int4"]["float32"] < weights[None]["float32"] / 4
    assert int4.embedding_bytes == reports[None].embedding_bytes


@QUANTIZED_ONCE
def test_an_int4_file_keeps_a_rotation_in_int8_and_the_keras_vectors(tmp_path):
    import onnx

    rotated = keras_subembed.compress(make_bert_embedder("mean"), "sub",
                                      {**SUB, "rotation": True})
    report = export_onnx(rotated, tmp_path / "rotated.onnx", quantization="int4")
    proto = onnx.load(str(tmp_path / "rotated.onnx"))
    bits = sorted(next(a.i for a in node.attribute if a.name == "bits")
                  for node in proto.graph.node if node.op_type == "MatMulNBits")
    # The 12 transformer kernels in int4; the rotation, part of the table, in int8
    # (int4 would move the vectors past the rounded reference's bound).
    assert bits == [4] * 12 + [8] and report.quantized_ops == 13
    width = rotated.backbone.hidden_dim  # inputs padded to whole blocks of 32
    assert report.constant_bytes["int8"] == -(-width // 32) * 32 * width
    assert report.max_abs_error <= report.tolerance and report.cosine_to_float > 0.999


@QUANTIZED_ONCE
def test_int4_verification_refuses_a_file_with_a_noisy_token_table(small, tmp_path, monkeypatch):
    """As for .tflite (issue 20 item 11): int4's fixed bound (half the largest
    |output|) would pass a wrong table; the rounded reference does not."""
    from keras_subembed.export.onnx import onnx_format as onnx_module
    from keras_subembed.export.errors import ExportVerificationError
    from tests.export.conftest import convert_a_noisy_copy

    convert_a_noisy_copy(monkeypatch, onnx_module, small)
    with pytest.raises(ExportVerificationError, match="differs from Keras by up to") as refused:
        export_onnx(small, tmp_path / "noisy.onnx", quantization="int4")
    assert list(tmp_path.iterdir()) == []
    error = float(re.search(r"by up to (\S+) ", str(refused.value)).group(1))
    assert error < ONNXFormat.tolerances["int4"]  # what the fixed bound alone would have let through


class Cycle:
    def __init__(self):
        self.me = self


@pytest.mark.tensorflow_only(reason="tf2onnx runs in the TensorFlow process; on JAX in a child")
def test_tf2onnx_garbage_is_collected_before_each_graph_pass_and_the_passes_restored():
    """tf2onnx's deep copies of the graph were 3.1 GB of cycles at once on
    multilingual-e5-small (RESULTS, "Peak memory of the default job")."""
    import gc
    import weakref

    import tf2onnx.optimizer

    from keras_subembed.export.onnx.onnx_format import collected_between_graph_passes

    passes = tf2onnx.optimizer._get_optimizers()
    before = dict(passes)
    enabled = gc.isenabled()
    gc.disable()  # no automatic collection decides the outcome
    try:
        with collected_between_graph_passes():
            assert gc.get_freeze_count() > 0  # the caller's heap is not walked again
            dropped = Cycle()
            alive = weakref.ref(dropped)
            del dropped
            assert alive() is not None
            optimizer = passes["fold_constants"]()
            assert alive() is None
            assert isinstance(optimizer, before["fold_constants"])
        assert passes == before and gc.get_freeze_count() == 0
        dropped = Cycle()
        alive = weakref.ref(dropped)
        del dropped
        passes["fold_constants"]()
        assert alive() is not None  # restored: tf2onnx's own factory, no collection
        with pytest.raises(KeyError):
            with collected_between_graph_passes():
                raise KeyError("a failing export")
        assert passes == before and gc.get_freeze_count() == 0
    finally:
        gc.collect()
        if enabled:
            gc.enable()


@pytest.mark.parametrize("kwargs, match", [
    # A .tflite recipe's name is not an ONNX quantization.
    ({"quantization": "int4_dynamic"}, "`quantization` must be one of .*'int4'.* "
                                       "Received: quantization='int4_dynamic'"),
    ({"sequence_lengths": [0]}, "sequence_lengths"),
    ({"latency_runs": -1}, "latency_runs"),
    ({"overwrite": "False"}, "`overwrite` must be a bool"),  # issue 32 item 12
])
def test_bad_arguments_are_named(small, tmp_path, kwargs, match):
    with pytest.raises(ValueError, match=match):
        export_onnx(small, tmp_path / "x.onnx", **kwargs)
    assert not list(tmp_path.iterdir())


@pytest.mark.tensorflow_only(reason="the same TensorFlow-process export as the BERT file on JAX")
def test_a_sentencepiece_embedder_gives_the_keras_vectors_in_ten_scripts(tmp_path):
    """multilingual-e5's pairing, BERT with an XLM-R SentencePiece tokenizer, tiny."""
    import onnxruntime

    from keras_subembed.files import sentencepiece_fingerprint
    from keras_subembed.export.onnx.onnx_format import read_onnx_metadata
    from tests.sentencepiece_utils import TEXTS as SCRIPT_TEXTS
    from tests.sentencepiece_utils import bert_xlm_roberta_embedder
    from tests.sentencepiece_utils import sentencepiece_proto

    embedder = keras_subembed.compress(
        bert_xlm_roberta_embedder(), "sub", dict(SUB, reserved_ids=[0, 1, 2, 3]))
    path = tmp_path / "multilingual.onnx"
    report = export_onnx(embedder, path)
    assert report.cosine_to_float > 0.9999
    data = path.read_bytes()
    assert read_onnx_metadata(data)["sentencepiece_sha256"] == sentencepiece_fingerprint(
        sentencepiece_proto())
    session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    features = embedder.preprocessor(SCRIPT_TEXTS)
    got = session.run(["embedding"], {name: np.asarray(features[name], "int32")
                                      for name in ("token_ids", "padding_mask")})[0]
    want = keras.ops.convert_to_numpy(embedder.encode_text(SCRIPT_TEXTS, verbose=0))
    np.testing.assert_allclose(got, want, atol=1e-5)
