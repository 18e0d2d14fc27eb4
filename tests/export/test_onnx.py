"""A compressed BERT embedder ships as a verified `.onnx` file, float32 and int8, from either backend."""

import importlib.util
import sys
from pathlib import Path

import keras
import numpy as np
import pytest

import keras_subembed
from keras_subembed.export import export_onnx

sys.path.insert(0, str(Path(__file__).parents[1] / "models"))
from test_compressed_text_embedder import SUB  # noqa: E402
from test_compressed_text_embedder import TEXTS  # noqa: E402
from test_compressed_text_embedder import make_bert_embedder  # noqa: E402

# find_spec, not an import: importing tf2onnx would import TensorFlow into a JAX run.
MISSING = [name for name in ("onnx", "onnxruntime", "tf2onnx") if importlib.util.find_spec(name) is None]
pytestmark = pytest.mark.skipif(bool(MISSING), reason=f"not installed: {MISSING}")


@pytest.fixture(scope="module")
def small():
    return keras_subembed.compress(make_bert_embedder("mean"), "sub", SUB)


# On JAX the export runs in a TensorFlow process whatever the quantization: the
# float file covers that path there, the int8 one (ONNX Runtime's quantizer, the
# same code in that process) is tested once, on TensorFlow.
@pytest.mark.parametrize("quantization", [None, pytest.param("dynamic", marks=pytest.mark.tensorflow_only(
    reason="the same TensorFlow-process export as the float file on JAX; quantized once"))])
def test_the_onnx_file_gives_the_keras_vectors_in_onnx_runtime(small, tmp_path, quantization):
    import onnxruntime

    path = tmp_path / "small.onnx"
    report = export_onnx(small, path, quantization=quantization)
    assert (report.inputs, report.outputs) == (("token_ids", "padding_mask"), ("embedding",))
    assert report.verified_sequence_lengths == (16, 24)  # dynamic length, one file
    assert report.cosine_to_float > (0.9999 if quantization is None else 0.999)
    if quantization:
        assert "MatMulInteger" in report.ops  # int8 weights, ONNX Runtime's dynamic kernels
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


@pytest.mark.parametrize("kwargs, match", [
    ({"quantization": "int4"}, "quantization"),
    ({"sequence_lengths": [0]}, "sequence_lengths"),
    ({"latency_runs": -1}, "latency_runs"),
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
    from keras_subembed.export.onnx import read_onnx_metadata
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
