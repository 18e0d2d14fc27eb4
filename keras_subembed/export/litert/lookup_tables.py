"""int8 lookup tables in a `.tflite` flatbuffer: what an int4 file stores besides its kernels.

A compressed embedding's sub-tables and the position table are read by
`GATHER` and `SLICE` ops, which `ai-edge-quantizer` quantizes only with
static (calibrated) activations. Dynamic-range conversion stores such
tables as int8 and dequantizes what the op read; `int8_lookup_tables` does
the same for the float tables of a file: each becomes int8 with one
symmetric scale per column (`max|column| / 127`), and a `DEQUANTIZE` after
its op gives the float rows the rest of the graph reads. A table read along
its last axis (a gather of columns, a slice of part of each row) stays
float: its scales would not follow the rows read.
"""

import copy

import numpy as np

from keras_subembed.tflite_metadata import read_model
from keras_subembed.tflite_metadata import tflite_schema as _schema
from keras_subembed.tflite_metadata import write_model

# As dynamic-range conversion: smaller tables stay float (their scale would cost more).
TABLE_MIN_ELEMENTS = 1024
TABLE_BITS = 8


def int8_lookup_tables(flatbuffer, min_elements=TABLE_MIN_ELEMENTS):
    """`flatbuffer` with each float32 table of `min_elements` or more values
    that only `GATHER` / `SLICE` ops read stored as int8.

    A table another op also reads (a tied embedding's logits matmul) stays
    float. Returns the new flatbuffer bytes (the same bytes if no table
    qualifies).

    Example:
    ```python
    smaller = int8_lookup_tables(open("encoder.tflite", "rb").read())
    ```
    """
    schema = _schema()
    model = read_model(flatbuffer)
    lookups = {schema.BuiltinOperator.GATHER, schema.BuiltinOperator.SLICE}
    builtin = [max(code.builtinCode, code.deprecatedBuiltinCode) for code in model.operatorCodes]
    dequantize = None
    changed = False
    for graph in model.subgraphs:
        tables = _lookup_only_tables(model, graph, builtin, lookups, min_elements)
        if not tables:
            continue
        if dequantize is None:
            dequantize = _operator_code(model, schema.BuiltinOperator.DEQUANTIZE, version=2)
        operators = []
        for op in graph.operators:
            operators.append(op)
            table_index = int(op.inputs[0]) if builtin[op.opcodeIndex] in lookups else -1
            if table_index not in tables:
                continue
            _bump_version(model.operatorCodes[op.opcodeIndex], 2)  # int8 input
            operators.append(_dequantized_output(schema, graph, op, tables[table_index], dequantize))
            changed = True
        for table_index, quantization in tables.items():
            tensor = graph.tensors[table_index]
            buffer = model.buffers[tensor.buffer]
            values = np.frombuffer(bytes(buffer.data), dtype="<f4").reshape(-1, tensor.shape[-1])
            buffer.data = np.clip(np.round(values / np.asarray(quantization.scale)), -127, 127
                                  ).astype(np.int8).reshape(-1).view(np.uint8)
            tensor.type = schema.TensorType.INT8
            tensor.quantization = quantization
        graph.operators = operators
    return write_model(model) if changed else flatbuffer


def _lookup_only_tables(model, graph, builtin, lookups, min_elements):
    """`{tensor index: its int8 quantization}` of the float32 constants of
    `graph` read only as input 0 of lookup ops that keep their last axis."""
    schema = _schema()
    readers = {}
    for op in graph.operators:
        for position, index in enumerate(op.inputs):
            readers.setdefault(int(index), []).append(
                builtin[op.opcodeIndex] in lookups and position == 0 and op)
    tables = {}
    for index, reads in readers.items():
        if index < 0 or not all(reads):
            continue
        tensor = graph.tensors[index]
        data = model.buffers[tensor.buffer].data
        if (tensor.type != schema.TensorType.FLOAT32 or data is None
                or len(data) // 4 < min_elements or tensor.quantization is not None
                and tensor.quantization.scale is not None
                or not all(_keeps_last_axis(graph, op, tensor) for op in reads)):
            continue
        values = np.frombuffer(bytes(data), dtype="<f4").reshape(-1, tensor.shape[-1])
        largest = np.max(np.abs(values), axis=0)
        quantization = schema.QuantizationParametersT()
        quantization.scale = np.where(largest > 0, largest / 127, 1.0).astype("float32").tolist()
        quantization.zeroPoint = [0] * len(quantization.scale)
        quantization.quantizedDimension = len(tensor.shape) - 1
        tables[index] = quantization
    return tables


def _keeps_last_axis(graph, op, table):
    """Whether `op`'s output ends with the whole last axis of `table`, the axis
    the scales run along (a gather along another axis, a slice of full rows)."""
    options = op.builtinOptions
    if hasattr(options, "axis") and options.axis % len(table.shape) == len(table.shape) - 1:
        return False  # a GATHER along the last axis
    output = graph.tensors[int(op.outputs[0])]
    shape = output.shapeSignature if output.shapeSignature is not None else output.shape
    return shape is not None and len(shape) > 0 and int(shape[-1]) == int(table.shape[-1])


def _dequantized_output(schema, graph, op, quantization, dequantize):
    """Point `op` at a new int8 output; return the DEQUANTIZE op that
    writes its float output tensor."""
    output = graph.tensors[int(op.outputs[0])]
    rows = schema.TensorT()
    rows.name = (output.name or b"") + b"/int8"
    rows.shape, rows.shapeSignature = output.shape, output.shapeSignature
    rows.type = schema.TensorType.INT8
    rows.buffer = 0  # the empty buffer: a computed tensor
    # The op keeps the table's last axis (the one the scales run along) last
    # (`_keeps_last_axis`).
    rows.quantization = copy.copy(quantization)
    rows.quantization.quantizedDimension = len(output.shape) - 1
    graph.tensors.append(rows)
    outputs = [int(i) for i in op.outputs]
    float_output, outputs[0] = outputs[0], len(graph.tensors) - 1
    op.outputs = outputs
    convert = schema.OperatorT()
    convert.opcodeIndex = dequantize
    convert.inputs, convert.outputs = [outputs[0]], [float_output]
    return convert


def _operator_code(model, builtin_code, version):
    """The index of `builtin_code` in the model's operator codes (added if missing)."""
    for index, code in enumerate(model.operatorCodes):
        if max(code.builtinCode, code.deprecatedBuiltinCode) == builtin_code:
            _bump_version(code, version)
            return index
    code = _schema().OperatorCodeT()
    code.builtinCode = builtin_code
    code.deprecatedBuiltinCode = min(builtin_code, 127)
    code.version = version
    model.operatorCodes.append(code)
    return len(model.operatorCodes) - 1


def _bump_version(code, version):
    code.version = max(code.version, version)
