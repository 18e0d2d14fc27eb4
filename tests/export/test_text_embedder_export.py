"""A compressed keras-hub TextEmbedder ships as `token_ids, padding_mask -> embedding`."""

import sys
from pathlib import Path

import numpy as np
import pytest

import keras_subembed
from keras_subembed.export import export_tflite

sys.path.insert(0, str(Path(__file__).parents[1] / "models" / "families"))
from test_compressed_text_embedder import SUB  # noqa: E402
from test_compressed_text_embedder import TEXTS  # noqa: E402
from test_compressed_text_embedder import make_bert_embedder  # noqa: E402

pytestmark = pytest.mark.tensorflow_only(reason="it exports .tflite files")


@pytest.mark.parametrize("quantization", [None, "dynamic"])
def test_a_compressed_bert_text_embedder_exports_verified_with_dynamic_length(
        tmp_path, quantization):
    from ai_edge_litert.interpreter import Interpreter

    small = keras_subembed.compress(make_bert_embedder("mean"), "sub", SUB)
    path = tmp_path / "small.tflite"
    report = export_tflite(small, path, quantization=quantization)
    assert (report.inputs, report.outputs) == (("token_ids", "padding_mask"), ("embedding",))
    assert report.verified_sequence_lengths == (16, 24)  # two lengths, one file
    interpreter = Interpreter(model_path=str(path))
    assert interpreter.get_signature_list()["serving_default"] == {
        "inputs": ["padding_mask", "token_ids"], "outputs": ["embedding"]}
    runner = interpreter.get_signature_runner("serving_default")
    features = small.preprocessor(TEXTS)
    got = runner(token_ids=np.asarray(features["token_ids"], "int32"),
                 padding_mask=np.asarray(features["padding_mask"], "int32"))["embedding"]
    want = np.asarray(small.encode_text(TEXTS, verbose=0))
    # The segment ids left out of the signature are zeros, as for one sentence.
    np.testing.assert_allclose(got, want, atol=1e-5 if quantization is None else 0.1)


def test_exporting_many_models_logs_no_retracing_warning(tmp_path):
    """Verification calls Keras eagerly: no tf.function traced per sample length and
    model, which made TensorFlow warn "triggered tf.function retracing" (issue 18)."""
    import logging

    class Collect(logging.Handler):
        def emit(self, record):
            messages.append(record.getMessage())

    messages, handler = [], Collect()
    logger = logging.getLogger("tensorflow")
    logger.addHandler(handler)
    try:
        small = keras_subembed.compress(make_bert_embedder("mean"), "sub", SUB)
        # Three exports (two sample lengths each) are enough: a tf.function traced per
        # length would be traced 6 times, past TensorFlow's warning threshold of 5
        # traces (checked by wrapping `verify_file`'s Keras call in tf.function: the
        # warning is logged and this test fails).
        for index, quantization in enumerate((None, "dynamic", None)):
            report = export_tflite(small, tmp_path / f"{index}.{quantization}.tflite",
                                   quantization=quantization)
            assert report.verified_sequence_lengths == (16, 24)
    finally:
        logger.removeHandler(handler)
    assert not [message for message in messages if "retracing" in message]
