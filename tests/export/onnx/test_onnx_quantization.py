"""ONNX Runtime's weight quantizers around the export: `Gemm` rewritten as `MatMul`, a
float weight left under a quantized label refused, int4 rounding as `MatMulNBits`
computes, and what a graph holds. On graphs made with `onnx.helper`."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto  # noqa: E402
from onnx import helper  # noqa: E402
from onnx import numpy_helper  # noqa: E402

from keras_subembed.export import ExportVerificationError  # noqa: E402
from keras_subembed.export.onnx import onnx_quantization  # noqa: E402


def gemm_graph(weight, bias=None, trans_b=0, alpha=1.0):
    """x (1, K) -> Gemm(x, weight[, bias]) -> y."""
    initializers = [numpy_helper.from_array(weight, "weight")]
    inputs = ["x", "weight"]
    if bias is not None:
        initializers.append(numpy_helper.from_array(bias, "bias"))
        inputs.append("bias")
    node = helper.make_node("Gemm", inputs, ["y"], "dense", transB=trans_b, alpha=alpha)
    columns = weight.shape[0] if trans_b else weight.shape[1]
    rows = weight.shape[1] if trans_b else weight.shape[0]
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, rows])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, columns])], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def run(proto, x):
    import onnxruntime

    session = onnxruntime.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(["y"], {"x": x})[0]


def test_a_gemm_with_a_constant_weight_becomes_matmul_and_add_computing_the_same():
    rng = np.random.default_rng(0)
    weight, bias = rng.normal(size=(3, 4)).astype("float32"), rng.normal(size=3).astype("float32")
    x = rng.normal(size=(1, 4)).astype("float32")
    proto = gemm_graph(weight, bias, trans_b=1)  # y = x @ weight.T + bias
    want = run(proto, x)
    onnx_quantization.gemm_as_matmul(proto)
    assert [node.op_type for node in proto.graph.node] == ["MatMul", "Add"]
    np.testing.assert_array_equal(numpy_helper.to_array(proto.graph.initializer[0]), weight.T)
    np.testing.assert_allclose(run(proto, x), want, rtol=1e-6)
    scaled = gemm_graph(weight.T, alpha=2.0)  # not a plain product: left as it is
    onnx_quantization.gemm_as_matmul(scaled)
    assert [node.op_type for node in scaled.graph.node] == ["Gemm"]


def test_a_large_float_weight_left_is_refused_and_a_small_one_kept():
    large = gemm_graph(np.ones((64, 16), "float32"))  # 1024 values: must be quantized
    onnx_quantization.gemm_as_matmul(large)
    with pytest.raises(ExportVerificationError, match=r"quantization='int4' left 1 float32 weight\(s\) "
                       r"of 1024 or more values in the ONNX graph \(dense/matmul \[64, 16\]\)"):
        onnx_quantization.check_weights_quantized(large, "int4")
    small = gemm_graph(np.ones((63, 16), "float32"))
    onnx_quantization.check_weights_quantized(small, "int4")
    with pytest.raises(ValueError, match=r"`quantization` must be 'dynamic' or 'int4' to quantize "
                                         r"an ONNX graph\. Received: quantization='int8'"):
        onnx_quantization.quantize(small, "int8", None)


@pytest.mark.parametrize("bits", [4, 8])
def test_nbits_rounding_is_symmetric_per_block_of_inputs(bits):
    rng = np.random.default_rng(1)
    matrix = rng.normal(size=(64, 3)).astype("float32")  # K=64 rows: two blocks of 32
    rounded = onnx_quantization.nbits_round(matrix, bits, block_size=32)
    assert rounded.shape == matrix.shape
    half = 2 ** (bits - 1)  # 8 for int4, 128 for int8
    for column in range(3):
        for block in (slice(0, 32), slice(32, 64)):
            weights, values = matrix[block, column], rounded[block, column]
            # Each block's own scale s = max|w| / half: the largest weight is code -half
            # (its sign in the scale), exact; the others round to the nearest level.
            largest = np.argmax(np.abs(weights))
            scale = np.abs(weights[largest]) / half
            codes = values / scale
            np.testing.assert_allclose(codes, np.round(codes), atol=1e-3)
            assert np.abs(codes).max() <= half + 1e-3
            np.testing.assert_allclose(values[largest], weights[largest], rtol=1e-6)
            inside = np.abs(weights) < (half - 0.5) * scale  # not clipped on the short side
            assert np.abs(values - weights)[inside].max() <= 0.5 * scale + 1e-6


def test_the_graph_counts_int4_weights_by_their_bits_and_quantized_nodes():
    weight = numpy_helper.from_array(np.zeros((3, 8), "uint8"), "packed")
    scales = numpy_helper.from_array(np.ones(3, "float32"), "scales")
    bias = numpy_helper.from_array(np.ones(3, "float32"), "bias")
    nodes = [helper.make_node("MatMulNBits", ["x", "packed", "scales"], ["h"], bits=4,
                              domain="com.microsoft"),
             helper.make_node("Add", ["h", "bias"], ["y"])]
    graph = helper.make_graph(nodes, "g", [], [], [weight, scales, bias])
    proto = helper.make_model(graph)
    assert onnx_quantization.constant_bytes(proto) == {"float32": 24, "int4": 24}
    assert onnx_quantization.quantized_op_count(proto) == 1
