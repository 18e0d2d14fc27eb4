"""`run_batch(token_ids, padding_mask) -> vectors` of a Keras embedder, a `.tflite` file and
an `.onnx` file; the files here are made by hand, their "embedding" the ids under the mask."""

import keras
import numpy as np
import pytest

from keras_subembed import evaluation
from tests.tflite_utils import echo_tflite

IDS = np.array([[5, 6, 7], [8, 9, 0]], "int32")
MASK = np.array([[1, 1, 1], [1, 1, 0]], "int32")


def test_a_keras_embedder_gets_one_segment_and_runs_for_inference():
    seen = {}

    def embedder(inputs, training):
        seen.update(inputs, training=training)
        return keras.ops.cast(inputs["token_ids"] * inputs["padding_mask"], "float32")

    vectors = evaluation.keras_runner(embedder)(IDS, MASK)
    assert keras.ops.convert_to_numpy(vectors).tolist() == [[5, 6, 7], [8, 9, 0]]
    assert keras.ops.convert_to_numpy(seen["segment_ids"]).tolist() == [[0, 0, 0], [0, 0, 0]]
    assert seen["training"] is False


def test_a_tflite_file_runs_by_its_signature(tmp_path):
    path = tmp_path / "echo.tflite"
    path.write_bytes(echo_tflite())
    assert evaluation.tflite_runner(path, num_threads=1)(IDS, MASK).tolist() == [[5, 6, 7], [8, 9, 0]]


@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_an_onnx_file_is_fed_ids_in_its_own_integer_width(tmp_path, dtype):
    onnx = pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    from onnx import helper

    element = getattr(onnx.TensorProto, dtype.upper())
    graph = helper.make_graph(
        [helper.make_node("Mul", ["token_ids", "padding_mask"], ["masked"]),
         helper.make_node("Cast", ["masked"], ["embedding"], to=onnx.TensorProto.FLOAT)],
        "echo", [helper.make_tensor_value_info(name, element, ["batch", "length"])
                 for name in ("token_ids", "padding_mask")],
        [helper.make_tensor_value_info("embedding", onnx.TensorProto.FLOAT, ["batch", "length"])])
    path = tmp_path / "echo.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    vectors = evaluation.onnx_runner(path, num_threads=1)(IDS, MASK)
    assert vectors.dtype == np.float32 and vectors.tolist() == [[5, 6, 7], [8, 9, 0]]
