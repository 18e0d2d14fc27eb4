"""Keras model -> small, builtins-only `.tflite` file, verified against Keras."""

import contextlib
import os
import re
import tempfile

import keras
import numpy as np

from keras_subembed import files
from keras_subembed.export.errors import UnsupportedOpError
from keras_subembed.export.export_format import ExportFormat
from keras_subembed.export.flatbuffer import constant_bytes
from keras_subembed.export.flatbuffer import embedding_constant_bytes
from keras_subembed.export.flatbuffer import op_names
from keras_subembed.export.flatbuffer import quantized_op_count
from keras_subembed.tflite_metadata import with_metadata
from keras_subembed.export.kernel_ops import kernel_ops
from keras_subembed.export.kernel_ops import rounded_layers
from keras_subembed.export.lookup_tables import int8_lookup_tables
from keras_subembed.export.model_parts import copy_model
from keras_subembed.export.model_parts import export_metadata
from keras_subembed.export.output_parity import TOLERANCES  # noqa: F401 - the formats' bounds
from keras_subembed.export.pipeline import export
from keras_subembed.export.pipeline import register_format
from keras_subembed.quantization.recipes import RECIPE_NAMES
from keras_subembed.export.quantizer_recipes import import_ai_edge_quantizer
from keras_subembed.export.quantizer_recipes import quantize_flatbuffer
from keras_subembed.export.saved_model import write_saved_model
from keras_subembed.export.signature import ServingInputs
from keras_subembed.layer_walk import walk_layers
from keras_subembed.quantization.recipes import get_recipe
from keras_subembed.quantization.fake_quantization import round_weights

# The TFLite converter's own, then ai-edge-quantizer recipes (int4 / int8
# transformer weights, `keras_subembed.quantization.RECIPES`).
QUANTIZATIONS = (None, "dynamic", "float16", "int8") + RECIPE_NAMES
# The converter leaves smaller weight tensors in float.
DYNAMIC_MIN_ELEMENTS = 1024
SIGNATURE = "serving_default"


@register_format("tflite")
class TFLiteFormat(ExportFormat):
    """A builtins-only `.tflite` file with the signature `serving_default` (see `export_tflite`)."""

    description = "a .tflite file"
    quantizations = QUANTIZATIONS
    saves_live_model = False  # a JAX user saves the model: the file is the one exported

    def __init__(self, quantization=None, representative_dataset=None, **kwargs):
        super().__init__(quantization=quantization, **kwargs)
        if quantization == "int8" and representative_dataset is None:
            raise ValueError(
                '`quantization="int8"` needs a `representative_dataset`: a callable '
                "yielding samples {input name: array}, to calibrate activation ranges."
            )
        self.representative_dataset = representative_dataset
        self.recipe = recipe_of(quantization)

    is_ours = staticmethod(files.is_tflite_file)
    file_metadata = staticmethod(files.tflite_metadata_of)

    def stage(self, model):
        super().stage(model)
        self.converted = recipe_model(self.model, self.recipe)

    def convert(self, scratch):
        return litert_file(self.converted, self.serving_inputs, self.quantization, self.recipe,
                           export_metadata(self.model), self.representative_dataset, scratch)

    def run(self, data, num_threads=None):
        runner = interpreter_runner(data, num_threads)
        return lambda sample: runner(**sample)

    def rounded_model(self):
        if self.quantization == "dynamic":
            return int8_rounded(self.model)
        return self.converted if self.recipe else None  # rounded by `stage`

    def file_facts(self, data, embedding):
        return dict(
            embedding_bytes=embedding_constant_bytes(data, embedding),
            ops=op_names(data),
            quantized_ops=quantized_op_count(data),
            constant_bytes=constant_bytes(data),
            outputs=tuple(sorted(interpreter_runner(data).get_output_details())),
        )


def recipe_of(quantization):
    """The `WeightRecipe` named `quantization`, or None for the converter's own
    quantizations; `ai-edge-quantizer` is imported first, to fail before converting."""
    if quantization not in RECIPE_NAMES:
        return None
    import_ai_edge_quantizer(quantization)
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
    return quantize_flatbuffer(flatbuffer, recipe, ops)


def export_tflite(model, path, **kwargs):
    """`export(model, path, format="tflite", **kwargs)`: a builtins-only `.tflite` file.

    Conversion goes Keras -> SavedModel (`keras.export.ExportArchive`) ->
    `tf.lite.TFLiteConverter.from_saved_model` with `TFLITE_BUILTINS` only, so
    the file runs in the standalone LiteRT interpreter (no Flex / select-TF
    ops). The signature `serving_default` takes the model's inputs by name
    (e.g. `token_ids`, `padding_mask`, `mask_positions`) with dynamic batch
    and sequence length and returns its outputs by name (the keys of a dict
    output, e.g. `embedding`, else `outputs`).

    Args:
        model: a `keras.Model` or a path to a `.keras` file. On a backend
            other than TensorFlow only a path works: it is converted in a
            TensorFlow subprocess.
        path: the `.tflite` file to write (atomically, only after
            verification passed). Checked before the conversion starts.
        quantization: `None` (float32), `"dynamic"` (int8 weights), `"float16"`
            or `"int8"` (weights and activations; needs
            `representative_dataset`, a callable yielding `{name: array}`),
            or an `ai-edge-quantizer` recipe (the `quantize` extra):
            `"int8_weight_only"`, `"int4_weight_only"`, `"int4_dynamic"`,
            `"int4_dynamic_int8_feedforward_output"`, `"int4_blockwise32_dynamic"`,
            `"int4_blockwise32_dynamic_int8_attention_output"`. A recipe
            stores every `Dense` / `EinsumDense` kernel outside the token
            embedding with its bits (a model with none, or a kernel the
            converter merged into another op, is refused); the dynamic ones
            also store the lookup tables as int8; the report's
            `quantized_ops` and `constant_bytes` say what the file holds.
        verify, sample_inputs, sequence_lengths, latency_runs, embedding_mode: as for
            `ExportFormat`: the file is run with `ai_edge_litert` and held to
            `TOLERANCES[quantization]`.
        overwrite: replace an existing `.tflite` file an export wrote at
            `path` (never another kind of file), and the tokenizer file
            beside it that the export wrote.
        tokenizer_file: write the model's tokenizer beside the file for
            `device/run_tflite.py` and `device/search_text.py`: `e5.tflite`
            gets `e5.vocab.txt` (WordPiece) or `e5.spm` (XLM-R SentencePiece);
            `report.tokenizer_path` names it. Defaults to `True` (nothing is
            written for a model without a preprocessor).

    Returns:
        An `ExportReport` (print it, or `.as_dict()` / `.to_json()`).

    Example:
    >>> report = export_tflite(masked_lm, "mlm.tflite", quantization="dynamic")
    >>> print(report)
    """
    return export(model, path, format="tflite", **kwargs)


def convert(model, serving_inputs=None, quantization=None, representative_dataset=None,
            scratch=None):
    """The `.tflite` bytes of `model`, builtin ops only, through a SavedModel.

    `serving_inputs` defaults to the model's declared inputs. The SavedModel
    is written in the folder `scratch` (removed after; an export passes a
    staging name beside its target, which the next export cleans up if this
    one is killed), else in the system's temporary folder.
    """
    import tensorflow as tf

    serving_inputs = serving_inputs or ServingInputs.of(model)
    with scratch_folder(scratch) as tmp:
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


@contextlib.contextmanager
def scratch_folder(path):
    if path is None:
        with tempfile.TemporaryDirectory() as tmp:
            yield tmp
        return
    os.mkdir(path, 0o700)
    try:
        yield str(path)
    finally:
        files.remove(path)


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
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_content=flatbuffer, num_threads=num_threads)
    return interpreter.get_signature_runner(SIGNATURE)


def int8_rounded(model):
    """A copy of `model` whose weights are rounded as dynamic-range conversion
    stores them: symmetric int8, one scale per output channel (last axis)."""
    copy = copy_model(model)
    for weight in copy.weights:
        value = keras.ops.convert_to_numpy(weight)
        if value.dtype.kind != "f" or value.size < DYNAMIC_MIN_ELEMENTS:
            continue
        axes = tuple(range(value.ndim - 1)) if value.ndim > 1 else None
        scale = np.max(np.abs(value), axis=axes, keepdims=True) / 127
        scale = np.where(scale > 0, scale, 1.0)
        weight.assign(np.round(value / scale) * scale)
    return copy
