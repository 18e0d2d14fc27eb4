"""The LiteRT conversion's own logic, without converting: the refusal of a non-builtin op
(naming the op and its layer), the recipe a quantization names, and running a file."""

import keras
import numpy as np

from keras_subembed.export import UnsupportedOpError
from keras_subembed.export.litert import conversion
from tests.tflite_utils import echo_tflite

# What TensorFlow's converter reports for an op outside the builtins (abridged).
CONVERTER_ERROR = (
    'loc(fused["Erfinv:", callsite("model_1/inverse_error_function_1/Erfinv@__inference_'
    'serve_123" at "StatefulPartitionedCall@__inference_signature_wrapper_456")]): '
    "error: 'tf.Erfinv' op is neither a custom op nor a flex op\n"
    "error: failed while converting: 'main'")


class InverseErrorFunction(keras.layers.Layer):
    def call(self, inputs):
        return inputs


def test_a_non_builtin_op_is_named_with_its_layer():
    inputs = keras.Input((3,))
    model = keras.Model(inputs, InverseErrorFunction(name="inverse_error_function")(inputs))
    error = conversion.unsupported_op_error(RuntimeError(CONVERTER_ERROR), model)
    assert isinstance(error, UnsupportedOpError)
    assert str(error).startswith("The model needs op(s) tf.Erfinv (in layer "
                                 "inverse_error_function), which are not TFLite builtins.")
    other = conversion.unsupported_op_error(RuntimeError("out of memory"), model)
    assert type(other) is RuntimeError and str(other) == "TFLite conversion failed: out of memory"


def test_only_a_recipe_name_gives_a_recipe_and_a_rounded_copy():
    assert conversion.recipe_of(None) is None and conversion.recipe_of("dynamic") is None
    assert conversion.recipe_of("int4_dynamic").name == "int4_dynamic"
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2)])
    assert conversion.recipe_model(model, None) is model


def test_a_file_runs_by_its_serving_signature():
    assert conversion.SIGNATURE == "serving_default"
    run = conversion.interpreter_runner(echo_tflite(), num_threads=1)
    outputs = run(token_ids=np.array([[5, 6, 7]], "int32"), padding_mask=np.array([[1, 1, 0]], "int32"))
    assert outputs["embedding"].tolist() == [[5, 6, 0]]
