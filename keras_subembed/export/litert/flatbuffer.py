"""Reading what a `.tflite` flatbuffer stores: op names and constant buffers
(its metadata: `keras_subembed.tflite_metadata`)."""

import re

from tensorflow.lite.tools import flatbuffer_utils  # TensorFlow: where .tflite files are

from keras_subembed.export.model_parts import weight_shapes
from keras_subembed.tflite_metadata import read_model
from keras_subembed.tflite_metadata import tflite_schema

# Integer types a quantized weight is stored in.
QUANTIZED_TYPES = ("int8", "int4", "uint8", "int16")


def constant_tensors(flatbuffer, with_type=False):
    """`[(name, shape, bytes)]` of every tensor backed by a non-empty buffer
    (`(name, shape, bytes, type name)` with `with_type`)."""
    model = read_model(flatbuffer)
    seen, constants = set(), []
    for graph in model.subgraphs:
        for tensor in graph.tensors:
            size = _size(model.buffers[tensor.buffer])
            if size and tensor.buffer not in seen:
                seen.add(tensor.buffer)
                shape = () if tensor.shape is None else tuple(int(d) for d in tensor.shape)
                constant = (tensor.name.decode(), shape, size)
                constants.append(constant + (_type_name(tensor.type),) if with_type else constant)
    return constants


def constant_bytes(flatbuffer):
    """`{dtype name: bytes}` of the file's constant tensors (weights, tables)."""
    totals = {}
    for _, _, size, dtype in constant_tensors(flatbuffer, with_type=True):
        totals[dtype] = totals.get(dtype, 0) + size
    return dict(sorted(totals.items()))


def quantized_op_count(flatbuffer):
    """How many ops compute with an integer constant weight, read directly or
    through a `DEQUANTIZE` (weight-only recipes). Lookups (`GATHER`, `SLICE`
    of an int8 table) move rows rather than compute and do not count."""
    operators = tflite_schema().BuiltinOperator
    model = read_model(flatbuffer)
    count = 0
    for graph in model.subgraphs:
        dequantized = set()
        for op in graph.operators:
            code = model.operatorCodes[op.opcodeIndex]
            builtin = max(code.builtinCode, code.deprecatedBuiltinCode)
            inputs = [int(i) for i in (op.inputs if op.inputs is not None else ()) if i >= 0]
            if builtin == operators.DEQUANTIZE:
                if _is_quantized_constant(model, graph, inputs[0]):
                    dequantized.add(int(op.outputs[0]))
            elif builtin not in (operators.GATHER, operators.SLICE) and any(
                    i in dequantized or _is_quantized_constant(model, graph, i) for i in inputs):
                count += 1
    return count


def op_names(flatbuffer):
    """Sorted names of the builtin (or custom) ops the file uses."""
    model = read_model(flatbuffer)
    return tuple(sorted({
        f"CUSTOM:{code.customCode.decode()}" if code.customCode is not None
        else flatbuffer_utils.opcode_to_name(model, index)
        for index, code in enumerate(model.operatorCodes)}))


def _size(buffer):
    return 0 if buffer.data is None else len(buffer.data)


def _type_name(code):
    return next((name.lower() for name, value in vars(tflite_schema().TensorType).items()
                 if value == code and not name.startswith("_")), str(code))


def _is_quantized_constant(model, graph, index):
    # Scales (per channel, or per block in the details) tell a quantized
    # weight from integer data (codes, shapes).
    tensor = graph.tensors[index]
    quantization = tensor.quantization
    return (_type_name(tensor.type) in QUANTIZED_TYPES and quantization is not None
            and (quantization.scale is not None and len(quantization.scale) > 0
                 or quantization.detailsType != 0)
            and bool(_size(model.buffers[tensor.buffer])))


def embedding_constant_bytes(flatbuffer, embedding_layer):
    """Bytes of the constants that hold the embedding layer's weights.

    A constant counts when its tensor name carries the layer's name (weights
    read from the layer's variables), or when the converter gave it a generic
    name without a layer path (`arith.constant12`, `tfl.pseudo_qconst3`: a
    folded, transposed or quantized copy) and it is shaped like one of the
    layer's weights, in either orientation. Shape alone is not enough: other
    layers' kernels can have the same shape (ALONE's FFN and the
    transformer's feed-forward layers, for instance).
    """
    if embedding_layer is None:
        return 0
    shapes = weight_shapes(embedding_layer)
    owned = re.compile(rf"(^|/){re.escape(embedding_layer.name)}(_\d+)?/")
    total = 0
    for name, shape, size in constant_tensors(flatbuffer):
        if owned.search(name) or ("/" not in name and shape in shapes):
            total += size
    return total
