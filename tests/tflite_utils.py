"""Test helpers: the shipped builtins-only TFLite conversion, running its files, and
small files written by hand (`handmade_tflite`)."""

import re

import numpy as np
from ai_edge_litert.interpreter import Interpreter

from keras_subembed.export.litert.conversion import convert


def convert_builtins_only(model, input_signature=None):
    """Model -> .tflite bytes by the shipped conversion (`keras_subembed.export`).

    The signature comes from the model's declared inputs; `input_signature`
    is accepted for old callers and must agree with them (dtype and rank).
    """
    flatbuffer = convert(model)
    if input_signature is not None:
        import tensorflow as tf

        specs = tf.nest.flatten(input_signature)
        declared = [(tensor.dtype, len(tensor.shape)) for tensor in model.inputs]
        assert [(spec.dtype.name, spec.shape.rank) for spec in specs] == declared, (
            specs, declared)
    return flatbuffer


def natural_order(name):
    """Sort key that puts `input_layer_2` before `input_layer_10` (Keras' naming order)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


class TFLiteRunner:
    """Runs the single signature of a .tflite flatbuffer with the LiteRT interpreter.

    The signature keeps names only, so positional arrays go to the inputs in
    natural name order: Keras' automatic names (`input_layer`,
    `input_layer_1`, ..., `input_layer_10`) follow creation order. Call
    `self.runner(**arrays_by_name)` for models with other input names.
    """

    def __init__(self, flatbuffer):
        self.file_bytes = len(flatbuffer)
        self.interpreter = Interpreter(model_content=flatbuffer)
        (self.key,) = self.interpreter.get_signature_list()
        signature = self.interpreter.get_signature_list()[self.key]
        self.input_names = sorted(signature["inputs"], key=natural_order)
        self.output_names = sorted(signature["outputs"], key=natural_order)
        self.runner = self.interpreter.get_signature_runner(self.key)

    def run_all(self, *arrays):
        """All outputs, in the model's output order."""
        outputs = self.runner(**dict(zip(self.input_names, arrays)))
        return [outputs[name] for name in self.output_names]

    def __call__(self, *arrays):
        (output,) = self.run_all(*arrays)
        return output

    def op_names(self):
        return {op["op_name"] for op in self.interpreter._get_ops_details()}

    def tensor_shapes(self):
        return [tuple(t["shape"]) for t in self.interpreter.get_tensor_details()]


def assert_no_table_sized_tensor(shapes, input_dim, output_dim):
    """No tensor anywhere holds as many values as the dense V x d table."""
    dense_size = input_dim * output_dim
    big = [shape for shape in shapes if int(np.prod(shape)) >= dense_size]
    assert not big, f"tensors as large as the {input_dim}x{output_dim} table: {big}"


def handmade_tflite(tensors, operators=(), inputs=(), outputs=(), signature=None):
    """A small `.tflite` flatbuffer written by hand with TensorFlow Lite's schema (no converter).

    Args:
        tensors: `(name, shape, type name, data or None, scales or None)` each; a
            `None` dimension is dynamic; `data` makes it a constant (its own buffer),
            `scales` quantization parameters (zero points 0).
        operators: `(builtin op name, input indices, output indices)` each.
        inputs, outputs: the subgraph's tensor indices.
        signature: the key of a signature over `inputs` and `outputs`, by tensor name.
    """
    from keras_subembed.tflite_metadata import tflite_schema
    from keras_subembed.tflite_metadata import write_model

    schema = tflite_schema()
    model = schema.ModelT()
    model.version = 3
    model.buffers = [schema.BufferT()]  # buffer 0: no data, by convention
    graph = schema.SubGraphT()
    graph.tensors = []
    for name, shape, dtype, data, scales in tensors:
        tensor = schema.TensorT()
        tensor.name, tensor.type = name, getattr(schema.TensorType, dtype.upper())
        tensor.shape = [1 if size is None else size for size in shape]
        if None in shape:
            tensor.shapeSignature = [-1 if size is None else size for size in shape]
        tensor.buffer = 0
        if data is not None:
            buffer = schema.BufferT()
            buffer.data = np.frombuffer(np.ascontiguousarray(data).tobytes(), np.uint8)
            model.buffers.append(buffer)
            tensor.buffer = len(model.buffers) - 1
        if scales is not None:
            tensor.quantization = schema.QuantizationParametersT()
            tensor.quantization.scale = list(scales)
            tensor.quantization.zeroPoint = [0] * len(scales)
        graph.tensors.append(tensor)
    codes, graph.operators = [], []
    for op_name, op_inputs, op_outputs in operators:
        code = getattr(schema.BuiltinOperator, op_name)
        codes += [code] if code not in codes else []
        operator = schema.OperatorT()
        operator.opcodeIndex = codes.index(code)
        operator.inputs, operator.outputs = list(op_inputs), list(op_outputs)
        graph.operators.append(operator)
    model.operatorCodes = []
    for code in codes:
        operator_code = schema.OperatorCodeT()
        operator_code.builtinCode, operator_code.deprecatedBuiltinCode = code, min(code, 127)
        operator_code.version = 1
        model.operatorCodes.append(operator_code)
    graph.inputs, graph.outputs = list(inputs), list(outputs)
    model.subgraphs = [graph]
    if signature is not None:
        definition = schema.SignatureDefT()
        definition.signatureKey, definition.subgraphIndex = signature, 0
        definition.inputs, definition.outputs = ([_tensor_map(graph, i) for i in indices]
                                                 for indices in (inputs, outputs))
        model.signatureDefs = [definition]
    return bytes(write_model(model))


def _tensor_map(graph, index):
    from keras_subembed.tflite_metadata import tflite_schema

    entry = tflite_schema().TensorMapT()
    entry.name, entry.tensorIndex = graph.tensors[index].name, index
    return entry


def echo_tflite():
    """A `.tflite` encoder (signature `serving_default`) whose "embedding" is its ids where
    the mask is 1: `token_ids * padding_mask`."""
    return handmade_tflite([("token_ids", (None, None), "int32", None, None),
                            ("padding_mask", (None, None), "int32", None, None),
                            ("embedding", (None, None), "int32", None, None)],
                           [("MUL", (0, 1), (2,))], inputs=(0, 1), outputs=(2,),
                           signature="serving_default")
