"""ONNX Runtime's own weight quantizers on a float `.onnx` graph, and what the result holds.

`"dynamic"`: `quantize_dynamic`, int8 weights per output channel, integer
kernels (`MatMulInteger`). `"int4"`: `MatMulNBitsQuantizer`, symmetric int4
in blocks of `INT4_BLOCK_SIZE` inputs of each output channel, one float32
scale per block (`MatMulNBits`, a `com.microsoft` op that ONNX Runtime's CPU,
mobile and web builds run); a compressed embedding's rotation, part of the
table, in 8-bit blocks the same way (`ROTATION_BITS`). Only weights change: the token embedding's
integer arrays (uint8 codes, int8 head rows) are gathered, not multiplied,
and stay as Keras stored them.
"""

import logging

import keras
import numpy as np

from keras_subembed.export.errors import ExportVerificationError
from keras_subembed.export.model_parts import copy_model
from keras_subembed.layer_walk import walk_layers
from keras_subembed.optional import matmul_nbits_quantizer
from keras_subembed.optional import onnx
from keras_subembed.optional import onnxruntime
from keras_subembed.optional import onnxruntime_quantization
from keras_subembed.quantization.fake_quantization import kernel_layers
from keras_subembed.quantization.kernel_rounding import reduced_axes

# 32: 5 bits a weight with its float32 scale (128 would be 4.25) and the
# rounding error of ai-edge-quantizer's blockwise-32 recipe, which the
# package measured best of its int4 recipes (benchmarks/RESULTS.md, issue #21).
INT4_BLOCK_SIZE = 32
# A weight smaller than this stays float32 (ONNX Runtime's quantizers and
# TFLite's converter skip them too); anything larger must be quantized.
MIN_QUANTIZED_ELEMENTS = 1024
# A compressed embedding's rotation is part of its table: int8, as the .tflite file
# stores the table (int4 rounds an orthogonal matrix's outputs by several percent).
ROTATION_BITS = 8
QUANTIZED_OPS = ("MatMulNBits", "MatMulInteger", "DynamicQuantizeMatMul", "GatherBlockQuantized")


def quantize(proto, quantization, scratch, rotations=()):
    """`proto` (a float `onnx.ModelProto`, `folded_constants`) with its MatMul
    weights quantized, as bytes; `scratch` is a folder for work files. Raises
    an `ExportVerificationError` when a large float weight is left.

    `rotations` (`model_parts.embedding_rotations`) belong to the token table:
    "int4" stores their MatMuls in `ROTATION_BITS` blocks, weight-only as its kernels."""
    gemm_as_matmul(proto)
    if quantization == "dynamic":
        proto = int8_matmuls(proto, scratch)
    elif quantization == "int4":
        table_nodes = matmul_nodes_holding(proto, rotations)
        proto = nbits_matmuls(proto, 4, nodes_to_exclude=table_nodes)
        if table_nodes:
            proto = nbits_matmuls(proto, ROTATION_BITS, nodes_to_include=table_nodes)
    else:
        raise ValueError("`quantization` must be 'dynamic' or 'int4' to quantize an ONNX graph. "
                         f"Received: quantization={quantization!r}")
    check_weights_quantized(proto, quantization)
    return proto.SerializeToString()


def int8_matmuls(proto, scratch):
    """`proto` with its MatMul weights in int8 per output column, integer kernels on
    activations quantized at run time."""
    matmul_path, int8_path = scratch / "matmul.onnx", scratch / "int8.onnx"
    onnx.save(proto, str(matmul_path))
    # Per channel: one scale per output column, as TFLite's dynamic range
    # (per tensor: cosine 0.96 to Keras on MiniLM, per channel 0.99).
    onnxruntime_quantization.quantize_dynamic(
        str(matmul_path), str(int8_path),
        weight_type=onnxruntime_quantization.QuantType.QInt8, per_channel=True)
    return onnx.load(str(int8_path))


def nbits_matmuls(proto, bits, **nodes):
    """`proto` with MatMul weights in symmetric `bits`-bit blocks of `INT4_BLOCK_SIZE`
    (`MatMulNBits`, weight-only); `nodes` as `MatMulNBitsQuantizer` takes them."""
    # It logs a line per node it leaves (thousands on multilingual-e5) at INFO,
    # which its own import makes the root logger's level.
    logger = logging.getLogger(matmul_nbits_quantizer.name)  # the module's logger
    level = logger.level
    logger.setLevel(max(level, logging.WARNING))
    try:
        quantizer = matmul_nbits_quantizer.MatMulNBitsQuantizer(
            proto, bits=bits, block_size=INT4_BLOCK_SIZE, is_symmetric=True, **nodes)
        quantizer.process()
    finally:
        logger.setLevel(level)
    return quantizer.model.model


def matmul_nodes_holding(proto, weights):
    """The names of `proto`'s MatMul nodes whose constant weight holds the values of
    one of `weights` (in any layout: the exporter may store it transposed)."""
    wanted = {}
    for weight in weights:
        wanted.setdefault(weight.size, []).append(np.sort(weight, axis=None))
    initializers = {i.name: i for i in proto.graph.initializer}
    names = []
    for node in proto.graph.node:
        initializer = initializers.get(node.input[1]) if node.op_type == "MatMul" else None
        if initializer is None or int(np.prod(initializer.dims)) not in wanted:
            continue
        values = np.sort(onnx.numpy_helper.to_array(initializer), axis=None)
        if any(np.array_equal(values, weight) for weight in wanted[values.size]):
            names.append(node.name)
    return names


def folded_constants(proto, scratch):
    """`proto` with constant subgraphs folded by ONNX Runtime's basic
    (portable) optimizations.

    tf2onnx leaves some kernels behind a `Reshape` (an `EinsumDense` with two
    input axes: attention's output projection), which the quantizers see as
    a computed, not a constant, weight and would leave in float32; and it
    keeps a second, reshaped copy of attention's query, key and value kernels
    that only a `Shape` reads.
    """
    source, folded = scratch / "unfolded.onnx", scratch / "folded.onnx"
    onnx.save(proto, str(source))
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    options.log_severity_level = 3
    onnxruntime.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
    proto = onnx.load(str(folded))
    # ONNX Runtime declares every domain it knows; a runtime should see only those used.
    used = {node.domain for node in proto.graph.node}
    kept = [opset for opset in proto.opset_import if opset.domain in used or opset.domain == ""]
    del proto.opset_import[:]
    proto.opset_import.extend(kept)
    return proto


def gemm_as_matmul(proto):
    """Rewrite `Gemm(A, B, C)` with a constant B as `MatMul(A, B) + C`, in place.

    tf2onnx writes 2-D `Dense` layers as `Gemm`, which ONNX Runtime's weight
    quantizers leave in float32 (about half of MiniLM's transformer); as
    MatMul their weights are quantized.
    """
    initializers = {i.name: i for i in proto.graph.initializer}
    transposed, nodes = set(), []
    for node in proto.graph.node:
        attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        plain = (attributes.get("alpha", 1.0) == 1.0 and not attributes.get("transA", 0)
                 and (len(node.input) < 3 or attributes.get("beta", 1.0) == 1.0))
        if node.op_type != "Gemm" or not plain or node.input[1] not in initializers:
            nodes.append(node)
            continue
        weight = initializers[node.input[1]]
        if attributes.get("transB", 0) and weight.name not in transposed:  # shared: once
            transposed.add(weight.name)
            weight.CopyFrom(onnx.numpy_helper.from_array(onnx.numpy_helper.to_array(weight).T,
                                                          weight.name))
        product = node.output[0] + "/matmul" if len(node.input) > 2 else node.output[0]
        nodes.append(onnx.helper.make_node("MatMul", node.input[:2], [product], node.name + "/matmul"))
        if len(node.input) > 2:
            nodes.append(onnx.helper.make_node("Add", [product, node.input[2]], node.output,
                                               node.name + "/bias"))
    del proto.graph.node[:]
    proto.graph.node.extend(nodes)


def check_weights_quantized(proto, quantization):
    """Raise when a `MatMul` / `Gemm` still multiplies by a float weight of
    `MIN_QUANTIZED_ELEMENTS` or more: the file would hold float32 weights
    under a quantized label."""
    initializers = {i.name: i for i in proto.graph.initializer}
    left = []
    for node in proto.graph.node:
        weight = initializers.get(node.input[1]) if node.op_type in ("MatMul", "Gemm") else None
        if (weight is not None and weight.data_type == onnx.TensorProto.FLOAT
                and int(np.prod(weight.dims)) >= MIN_QUANTIZED_ELEMENTS):
            left.append(f"{node.name or node.output[0]} {list(weight.dims)}")
    if left:
        raise ExportVerificationError(
            f"quantization={quantization!r} left {len(left)} float32 weight(s) of "
            f"{MIN_QUANTIZED_ELEMENTS} or more values in the ONNX graph ({', '.join(left[:3])}"
            f"{', ...' if len(left) > 3 else ''}): the file would hold float weights under "
            "that label."
        )


def int4_rounded(model, block_size=INT4_BLOCK_SIZE):
    """A copy of `model` whose `Dense` / `EinsumDense` kernels outside the
    token embedding, and whose embeddings' rotations, are rounded as the int4
    file stores them.

    The rounding is ONNX Runtime's own (the function `MatMulNBitsQuantizer`
    calls), on each kernel laid out as the graph's MatMul weight: input axes
    flattened into K rows, output axes into N columns, blocks along K.
    """
    copy = copy_model(model)
    for layer in walk_layers(copy):
        if getattr(layer, "rotation_matrix", None) is not None:
            # Multiplied as `vectors @ rotation`: (K, N) as stored.
            layer.rotation_matrix.assign(nbits_round(
                keras.ops.convert_to_numpy(layer.rotation_matrix), ROTATION_BITS, block_size))
    for layer in kernel_layers(copy):
        if not layer.built:
            continue
        kernel = np.asarray(keras.ops.convert_to_numpy(layer._kernel), "float32")
        axes = reduced_axes(layer)
        order = list(axes) + [axis for axis in range(kernel.ndim) if axis not in axes]
        rows = int(np.prod([kernel.shape[axis] for axis in axes]))
        laid_out = kernel.transpose(order)
        matrix = nbits_round(laid_out.reshape(rows, -1), 4, block_size)
        layer._kernel.assign(matrix.reshape(laid_out.shape).transpose(np.argsort(order)))
    return copy


def nbits_round(matrix, bits, block_size=INT4_BLOCK_SIZE):
    """The (K, N) float `matrix` as `MatMulNBits` computes with it after
    `MatMulNBitsQuantizer(bits=bits, is_symmetric=True)`: ONNX Runtime's packing,
    unpacked (4 bits: low nibble first; symmetric codes are offset by 2 ** (bits - 1))."""
    config = matmul_nbits_quantizer.DefaultWeightOnlyQuantConfig(
        block_size=block_size, is_symmetric=True, bits=bits)
    packed, scales, _ = matmul_nbits_quantizer.DefaultWeightOnlyQuantizer(config).qbits_block_quant(
        np.ascontiguousarray(matrix, "float32"))
    rows, columns = matrix.shape
    codes = np.stack([packed & 0x0F, packed >> 4], axis=-1) if bits == 4 else packed
    codes = codes.reshape(columns, scales.shape[1], -1).astype("float32") - 2 ** (bits - 1)
    values = codes * scales[:, :, None]
    return values.reshape(columns, -1)[:, :rows].T


def constant_bytes(proto):
    """`{dtype name: bytes}` of the graph's initializers; a `MatMulNBits`
    weight counts as `int<bits>` (it is stored packed in uint8)."""
    packed = {node.input[1]: next((a.i for a in node.attribute if a.name == "bits"), 4)
              for node in proto.graph.node if node.op_type == "MatMulNBits"}
    totals = {}
    for initializer in proto.graph.initializer:
        array = onnx.numpy_helper.to_array(initializer)
        name = f"int{packed[initializer.name]}" if initializer.name in packed else array.dtype.name
        totals[name] = totals.get(name, 0) + array.nbytes
    return dict(sorted(totals.items()))


def quantized_op_count(proto):
    """How many nodes compute with quantized weights."""
    return sum(node.op_type in QUANTIZED_OPS for node in proto.graph.node)
