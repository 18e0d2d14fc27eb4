"""Keras model -> LiteRT flatbuffer: the conversion both `.tflite` formats (plain and MediaPipe) share."""

import re

import tensorflow as tf

from keras_subembed import files
from keras_subembed.export.errors import UnsupportedOpError
from keras_subembed.export.litert.kernel_ops import kernel_ops
from keras_subembed.export.litert.kernel_ops import rotation_ops
from keras_subembed.export.litert.kernel_ops import rounded_layers
from keras_subembed.export.litert.lookup_tables import int8_lookup_tables
from keras_subembed.export.litert.quantizer_recipes import quantize_flatbuffer
from keras_subembed.export.model_parts import copy_model
from keras_subembed.export.saved_model import write_saved_model
from keras_subembed.export.signature import ServingInputs
from keras_subembed.layer_walk import walk_layers
from keras_subembed.optional import ai_edge_quantizer
from keras_subembed.optional import litert_interpreter
from keras_subembed.quantization.fake_quantization import round_weights
from keras_subembed.quantization.recipes import RECIPE_NAMES
from keras_subembed.quantization.recipes import get_recipe
from keras_subembed.tflite_metadata import with_metadata

SIGNATURE = "serving_default"


def recipe_of(quantization):
    """The `WeightRecipe` named `quantization`, or None for the converter's own
    quantizations; `ai-edge-quantizer` is imported first, to fail before converting."""
    if quantization not in RECIPE_NAMES:
        return None
    ai_edge_quantizer.require()
    return get_recipe(quantization)


def recipe_model(model, recipe):
    """The model a file is converted from: `model`, or for a recipe a copy with
    the kernels it quantizes rounded as the file stores them."""
    if recipe is None:
        return model
    rounded_layers(model, recipe)  # nothing to quantize fails before converting
    # The file's min-max quantizer stores a rounded kernel's own grid
    # (clipped or not) exactly: the file computes what training rounded.
    return round_weights(copy_model(model), recipe)


def litert_file(converted, serving_inputs, quantization, recipe, metadata,
                representative_dataset=None, scratch=None):
    """The `.tflite` bytes of `converted` (from `recipe_model`) with `metadata`
    as the entry `keras_subembed`, quantized by the converter or by `recipe`.

    Formats that add to the flatbuffer (MediaPipe's metadata) do so after:
    a large quantized file keeps its buffers past the flatbuffer (by offset),
    which rewriting the flatbuffer would break.
    """
    flatbuffer = convert(converted, serving_inputs, None if recipe else quantization,
                         representative_dataset, scratch=scratch)
    flatbuffer = with_metadata(flatbuffer, metadata)
    if not recipe:
        return flatbuffer
    if recipe.table_bits:
        flatbuffer = int8_lookup_tables(flatbuffer)
    # The ops holding the very kernels Keras rounds, matched by value.
    ops = [(scope, rounding) for scope, _, rounding in kernel_ops(flatbuffer, converted, recipe)]
    if recipe.table_bits:
        ops += rotation_ops(flatbuffer, converted, recipe.table_bits)
    return quantize_flatbuffer(flatbuffer, recipe, ops)


def convert(model, serving_inputs=None, quantization=None, representative_dataset=None,
            scratch=None):
    """The `.tflite` bytes of `model`, builtin ops only, through a SavedModel.

    `serving_inputs` defaults to the model's declared inputs. The SavedModel
    is written in the folder `scratch` (removed after; an export passes a
    staging name beside its target, which the next export cleans up if this
    one is killed), else in the system's temporary folder.
    """
    serving_inputs = serving_inputs or ServingInputs.of(model)
    with files.scratch_folder(scratch) as tmp:
        write_saved_model(model, f"{tmp}/saved_model", serving_inputs)
        converter = tf.lite.TFLiteConverter.from_saved_model(f"{tmp}/saved_model")
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
        if quantization is not None:
            converter.optimizations = [tf.lite.Optimize.DEFAULT]
        if quantization == "float16":
            converter.target_spec.supported_types = [tf.float16]
        if quantization == "int8":
            converter.representative_dataset = representative_dataset
        try:
            return converter.convert()
        except Exception as error:  # ConverterError; its text names the ops
            raise unsupported_op_error(error, model) from error


def unsupported_op_error(error, model):
    """An error naming the non-builtin op(s) and, where found, the layer."""
    text = str(error)
    ops = sorted(set(re.findall(r"'(tf\.\w+)' op is neither a custom op nor a flex op", text)))
    if not ops:
        return RuntimeError(f"TFLite conversion failed: {text[-2000:]}")
    layer_names = {layer.name for layer in walk_layers(model)}
    locations = re.findall(r'"([^"]*/[^"]*)"', text)  # op paths: "model_1/layer_1/op@fn"
    parts = {re.sub(r"_\d+$", "", part) for loc in locations for part in loc.split("/")}
    layers = sorted(parts & layer_names)
    where = f" (in layer {', '.join(layers)})" if layers else ""
    return UnsupportedOpError(
        f"The model needs op(s) {', '.join(ops)}{where}, which are not TFLite builtins. "
        "The standalone LiteRT interpreter cannot run Flex (select TF) ops, so the "
        "export refuses them."
    )


def interpreter_runner(flatbuffer, num_threads=None):
    interpreter = litert_interpreter.Interpreter(model_content=flatbuffer, num_threads=num_threads)
    return interpreter.get_signature_runner(SIGNATURE)
