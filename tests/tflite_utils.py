"""Test helpers: builtins-only TFLite conversion through a SavedModel, and running it."""

import tempfile

import keras
import numpy as np
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter


def convert_builtins_only(model, input_signature):
    """Model -> SavedModel (ExportArchive) -> .tflite bytes with TFLITE_BUILTINS only."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = keras.export.ExportArchive()
        archive.track(model)
        archive.add_endpoint("serve", model.call, input_signature=input_signature)
        archive.write_out(f"{tmp}/saved_model", verbose=False)
        converter = tf.lite.TFLiteConverter.from_saved_model(f"{tmp}/saved_model")
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
        return converter.convert()


class TFLiteRunner:
    """Runs the single signature of a .tflite flatbuffer with the LiteRT interpreter."""

    def __init__(self, flatbuffer):
        self.file_bytes = len(flatbuffer)
        self.interpreter = Interpreter(model_content=flatbuffer)
        (self.key,) = self.interpreter.get_signature_list()
        self.input_names = self.interpreter.get_signature_list()[self.key]["inputs"]
        self.runner = self.interpreter.get_signature_runner(self.key)

    def run_all(self, *arrays):
        """All outputs, in the signature's output-name order."""
        outputs = self.runner(**dict(zip(self.input_names, arrays)))
        return [outputs[name] for name in sorted(outputs)]

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
