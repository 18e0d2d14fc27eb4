"""Keras model -> small, builtins-only `.tflite` file, verified against Keras."""

import dataclasses

import keras
import numpy as np

from keras_subembed import files
from keras_subembed.export.export_format import ExportFormat
from keras_subembed.export.litert.conversion import interpreter_runner
from keras_subembed.export.litert.conversion import litert_file
from keras_subembed.export.litert.conversion import recipe_model
from keras_subembed.export.litert.conversion import recipe_of
from keras_subembed.export.litert.flatbuffer import constant_bytes
from keras_subembed.export.litert.flatbuffer import embedding_constant_bytes
from keras_subembed.export.litert.flatbuffer import op_names
from keras_subembed.export.litert.flatbuffer import quantized_op_count
from keras_subembed.export.litert.quantizer_recipes import RECIPE_TOLERANCES
from keras_subembed.export.model_parts import copy_model
from keras_subembed.export.model_parts import export_metadata
from keras_subembed.export.output_parity import FLOAT32_TOLERANCE
from keras_subembed.export.pipeline import export
from keras_subembed.export.pipeline import register_format
from keras_subembed.quantization.recipes import RECIPE_NAMES

# The TFLite converter's own, then ai-edge-quantizer recipes (int4 / int8
# transformer weights, `keras_subembed.quantization.RECIPES`).
QUANTIZATIONS = (None, "dynamic", "float16", "int8") + RECIPE_NAMES
# The converter leaves smaller weight tensors in float.
DYNAMIC_MIN_ELEMENTS = 1024


@register_format("tflite")
class TFLiteFormat(ExportFormat):
    """A builtins-only `.tflite` file with the signature `serving_default` (see `export_tflite`)."""

    description = "a .tflite file"
    quantizations = QUANTIZATIONS
    # "int8" quantizes activations too, calibrated on a few samples: it errs most.
    tolerances = {None: FLOAT32_TOLERANCE, "float16": 1e-2, "dynamic": 0.1, "int8": 0.25,
                  **RECIPE_TOLERANCES}
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

    def stage(self, model, tokenizer_file=None):
        staged = super().stage(model, tokenizer_file)
        return dataclasses.replace(staged, converted=recipe_model(staged.model, self.recipe))

    def convert(self, staged, scratch):
        return litert_file(staged.converted, staged.serving_inputs, self.quantization, self.recipe,
                           export_metadata(staged.model), self.representative_dataset, scratch)

    def run(self, data, num_threads=None):
        runner = interpreter_runner(data, num_threads)
        return lambda sample: runner(**sample)

    def rounded_model(self, staged):
        if self.quantization == "dynamic":
            return int8_rounded(staged.model)
        return staged.converted if self.recipe else None  # rounded by `stage`

    def file_facts(self, staged, data, embedding):
        return dict(
            embedding_bytes=embedding_constant_bytes(data, embedding),
            ops=op_names(data),
            quantized_ops=quantized_op_count(data),
            constant_bytes=constant_bytes(data),
            outputs=tuple(sorted(interpreter_runner(data).get_output_details())),
        )


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
            `TFLiteFormat.tolerances[quantization]`.
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
    ```python
    report = export_tflite(masked_lm, "mlm.tflite", quantization="dynamic")
    print(report)
    ```
    """
    return export(model, path, format="tflite", **kwargs)


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
