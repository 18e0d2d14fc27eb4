"""Test helpers: the shipped builtins-only TFLite conversion, and running its files."""

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
