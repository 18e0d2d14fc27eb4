"""Reading what a `.tflite` flatbuffer stores: op names and constant buffers
(its metadata: `keras_subembed.tflite_metadata`)."""

import re

import numpy as np

from keras_subembed.tflite_metadata import tflite_schema


def constant_tensors(flatbuffer, with_type=False):
    """`[(name, shape, bytes)]` of every tensor backed by a non-empty buffer
    (`(name, shape, bytes, type name)` with `with_type`)."""
    schema = tflite_schema()
    model = schema.Model.GetRootAsModel(flatbuffer, 0)
    sizes = {}
    for index in range(model.BuffersLength()):
        buffer = model.Buffers(index)
        sizes[index] = buffer.DataLength() or int(buffer.Size())
    seen, constants = set(), []
    for graph_index in range(model.SubgraphsLength()):
        graph = model.Subgraphs(graph_index)
        for tensor_index in range(graph.TensorsLength()):
            tensor = graph.Tensors(tensor_index)
            buffer = tensor.Buffer()
            if sizes.get(buffer, 0) and buffer not in seen:
                seen.add(buffer)
                shape = tuple(int(d) for d in tensor.ShapeAsNumpy()) if tensor.ShapeLength() else ()
                constant = (tensor.Name().decode(), shape, sizes[buffer])
                constants.append(constant + (_type_name(tensor.Type()),) if with_type else constant)
    return constants


def _type_name(code):
    names = {value: key.lower() for key, value in vars(tflite_schema().TensorType).items()
             if not key.startswith("_")}
    return names.get(code, str(code))


def constant_bytes(flatbuffer):
    """`{dtype name: bytes}` of the file's constant tensors (weights, tables)."""
    totals = {}
    for _, _, size, dtype in constant_tensors(flatbuffer, with_type=True):
        totals[dtype] = totals.get(dtype, 0) + size
    return dict(sorted(totals.items()))


# Integer types a quantized weight is stored in.
QUANTIZED_TYPES = ("int8", "int4", "uint8", "int16")


def quantized_op_count(flatbuffer):
    """How many ops compute with an integer constant weight, read directly or
    through a `DEQUANTIZE` (weight-only recipes). Lookups (`GATHER`, `SLICE`
    of an int8 table) move rows rather than compute and do not count."""
    schema = tflite_schema()
    model = schema.Model.GetRootAsModel(flatbuffer, 0)
    lookups = {schema.BuiltinOperator.GATHER, schema.BuiltinOperator.SLICE}
    count = 0
    for graph_index in range(model.SubgraphsLength()):
        graph = model.Subgraphs(graph_index)
        dequantized = set()
        operators = [graph.Operators(i) for i in range(graph.OperatorsLength())]
        for op in operators:
            code = model.OperatorCodes(op.OpcodeIndex())
            if max(code.BuiltinCode(), code.DeprecatedBuiltinCode()) == (
                    schema.BuiltinOperator.DEQUANTIZE):
                if _is_quantized_constant(model, graph, op.Inputs(0)):
                    dequantized.add(op.Outputs(0))
                continue
            if max(code.BuiltinCode(), code.DeprecatedBuiltinCode()) in lookups:
                continue
            inputs = [op.Inputs(i) for i in range(op.InputsLength())]
            if any(i in dequantized or _is_quantized_constant(model, graph, i)
                   for i in inputs if i >= 0):
                count += 1
    return count


def _is_quantized_constant(model, graph, index):
    # Scales (per channel, or per block in the details) tell a quantized
    # weight from integer data (codes, shapes).
    tensor = graph.Tensors(index)
    buffer = model.Buffers(tensor.Buffer())
    quantization = tensor.Quantization()
    return (_type_name(tensor.Type()) in QUANTIZED_TYPES and quantization is not None
            and (quantization.ScaleLength() > 0 or quantization.DetailsType() != 0)
            and bool(buffer.DataLength() or buffer.Size()))


def op_names(flatbuffer):
    """Sorted names of the builtin (or custom) ops the file uses."""
    schema = tflite_schema()
    model = schema.Model.GetRootAsModel(flatbuffer, 0)
    names = {value: key for key, value in vars(schema.BuiltinOperator).items()
             if not key.startswith("_")}
    ops = set()
    for index in range(model.OperatorCodesLength()):
        code = model.OperatorCodes(index)
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        if builtin == schema.BuiltinOperator.CUSTOM:
            ops.add(f"CUSTOM:{code.CustomCode().decode()}")
        else:
            ops.add(names.get(builtin, str(builtin)))
    return tuple(sorted(ops))


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
    shapes = set()
    for weight in embedding_layer.weights:
        shape = tuple(int(d) for d in weight.shape)
        if int(np.prod(shape)) > 1:
            shapes.update({shape, tuple(reversed(shape))})
    owned = re.compile(rf"(^|/){re.escape(embedding_layer.name)}(_\d+)?/")
    total = 0
    for name, shape, size in constant_tensors(flatbuffer):
        if owned.search(name) or ("/" not in name and shape in shapes):
            total += size
    return total
