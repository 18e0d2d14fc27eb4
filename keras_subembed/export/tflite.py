"""Keras model -> small, builtins-only `.tflite` file, verified against Keras."""

import contextlib
import os
import re
import statistics
import tempfile
import time

import keras
import numpy as np

from keras_subembed import files
from keras_subembed.export import tensorflow_process
from keras_subembed.export.errors import ExportVerificationError
from keras_subembed.export.errors import UnsupportedOpError
from keras_subembed.export.export_report import export_target
from keras_subembed.export.export_report import measure_samples
from keras_subembed.export.export_report import write_and_report
from keras_subembed.export.flatbuffer import constant_bytes
from keras_subembed.export.flatbuffer import embedding_constant_bytes
from keras_subembed.export.flatbuffer import op_names
from keras_subembed.export.flatbuffer import quantized_op_count
from keras_subembed.export.kernel_ops import kernel_ops
from keras_subembed.export.kernel_ops import rounded_layers
from keras_subembed.export.lookup_tables import int8_lookup_tables
from keras_subembed.tflite_metadata import with_metadata
from keras_subembed.export.model_parts import check_embedding_mode
from keras_subembed.export.model_parts import copy_model
from keras_subembed.export.model_parts import export_metadata
from keras_subembed.export.model_parts import load_model
from keras_subembed.export.model_parts import with_embedding_mode
from keras_subembed.quantization.recipes import RECIPE_NAMES
from keras_subembed.export.quantizer_recipes import import_ai_edge_quantizer
from keras_subembed.export.quantizer_recipes import quantize_flatbuffer
from keras_subembed.export.saved_model import write_saved_model
from keras_subembed.export.signature import ServingInputs
from keras_subembed.export.signature import check_sample_inputs
from keras_subembed.export.signature import make_sample_inputs
from keras_subembed.export.signature import sequence_length_of
from keras_subembed.export.signature import serving_function
from keras_subembed.layer_walk import walk_layers
from keras_subembed.quantization.recipes import get_recipe
from keras_subembed.quantization.fake_quantization import round_weights

# The TFLite converter's own, then ai-edge-quantizer recipes (int4 / int8
# transformer weights, `keras_subembed.quantization.RECIPES`).
QUANTIZATIONS = (None, "dynamic", "float16", "int8") + RECIPE_NAMES
# Allowed max abs error, as a fraction of the largest |Keras output| (at least 1).
TOLERANCES = {None: 1e-4, "float16": 1e-2, "dynamic": 0.1, "int8": 0.25,
              **{name: 0.1 if name.startswith("int8") else 0.5 for name in RECIPE_NAMES}}
# Dynamic range and recipes: the file may err at most this many times the
# error of the Keras model with its weights rounded as the file stores them.
# A genuine file errs about 1.3 times that; a wrong table (a noisy copy) 8 times.
DYNAMIC_ERROR_FACTOR = 4.0
# The converter leaves smaller weight tensors in float.
DYNAMIC_MIN_ELEMENTS = 1024
SIGNATURE = "serving_default"


def export_tflite(
    model,
    path,
    quantization=None,
    representative_dataset=None,
    embedding_mode="compressed",
    verify=True,
    overwrite=False,
    sample_inputs=None,
    sequence_lengths=(16, 128),
    latency_runs=0,
):
    """Convert `model` (or a `.keras` path) to a builtins-only `.tflite` file.

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
            `"int4_blockwise32_dynamic"`,
            `"int4_blockwise32_dynamic_int8_attention_output"`. A recipe
            stores every `Dense` / `EinsumDense` kernel outside the token
            embedding with its bits (a model with none is refused); the
            dynamic ones also store the lookup tables as int8; the
            report's `quantized_ops` and `constant_bytes` say what the file
            holds.
        embedding_mode: `"compressed"` keeps the compressed computation in the
            file (small); `"frozen"` stores the embeddings whose class has
            `freeze_speeds_up` (ALONE, DeFINE) as one lookup table (fast).
        verify: run the file with `ai_edge_litert` and compare every output
            with Keras; exceeding `TOLERANCES[quantization]` (times the
            largest |output|, at least 1) raises `ExportVerificationError`
            and writes nothing.
        overwrite: replace an existing `.tflite` file at `path` (never
            another kind of file).
        sample_inputs: the inputs to verify on: a list of samples, each a
            dict `{input name: array}` (or the array for a single-input
            model), batch and length at least 1. Needed when the inputs are
            not integer ids and masks named `token_ids`, `padding_mask`,
            `segment_ids`, `mask_positions` (or one integer input).
        sequence_lengths: lengths of the generated samples (capped at the
            model's `max_sequence_length`), each a positive int.
        latency_runs: when positive, time this many runs of one sequence
            (batch 1, 1 thread) and report the median.

    Returns:
        An `ExportReport` (print it, or `.as_dict()` / `.to_json()`).

    Example:
    >>> report = export_tflite(masked_lm, "mlm.tflite", quantization="dynamic")
    >>> print(report)
    """
    check_quantization(quantization, representative_dataset)
    check_embedding_mode(embedding_mode)
    check_sequence_lengths(sequence_lengths)
    check_latency_runs(latency_runs)
    source, path = export_target(model, path, overwrite, files.is_tflite_file, "a .tflite file")
    if not tensorflow_process.is_tensorflow_backend():
        return tensorflow_process.run_export(
            "export_tflite", model, source, path=str(path), quantization=quantization,
            representative_dataset=representative_dataset, embedding_mode=embedding_mode,
            verify=verify, overwrite=overwrite, sample_inputs=sample_inputs,
            sequence_lengths=tuple(sequence_lengths), latency_runs=latency_runs)
    model = with_embedding_mode(load_model(model), embedding_mode)
    serving_inputs = ServingInputs.of(model, sample_inputs)
    samples = None  # made before converting, so a missing sample fails early
    if verify or latency_runs:
        samples = (check_sample_inputs(sample_inputs, serving_inputs) if sample_inputs is not None
                   else make_sample_inputs(model, serving_inputs, sequence_lengths))
    recipe = get_recipe(quantization) if quantization in RECIPE_NAMES else None
    converted = model
    if recipe:
        rounded_layers(model, recipe)  # a model with nothing to quantize fails before converting
        # The file's min-max quantizer stores a rounded kernel's own grid
        # (clipped or not) exactly: the file computes what training rounded.
        converted = round_weights(copy_model(model), recipe)
    flatbuffer = convert(converted, serving_inputs, None if recipe else quantization,
                         representative_dataset, scratch=files.staging_name(path))
    flatbuffer = with_metadata(flatbuffer, export_metadata(model))
    if recipe:
        if recipe.table_bits:
            flatbuffer = int8_lookup_tables(flatbuffer)
        # After the metadata and tables: a large quantized file keeps its buffers
        # past the flatbuffer (by offset), which rewriting the flatbuffer would break.
        # The ops holding the very kernels Keras rounds, matched by value.
        ops = [(scope, rounding) for scope, _, rounding in kernel_ops(flatbuffer, converted, recipe)]
        flatbuffer = quantize_flatbuffer(flatbuffer, recipe, ops)
    checks = measure_samples(TOLERANCES[quantization], verify_flatbuffer if verify else None,
                             median_latency_ms, latency_runs, model, serving_inputs, flatbuffer, samples,
                             quantization, path)
    return write_and_report(path, flatbuffer, overwrite, model, checks, quantization=quantization,
                            embedding_mode=embedding_mode, inputs=serving_inputs.names,
                            file_facts=flatbuffer_facts)


def check_quantization(quantization, representative_dataset):
    if quantization not in QUANTIZATIONS:
        raise ValueError(
            f"`quantization` must be one of {QUANTIZATIONS}. "
            f"Received: quantization={quantization!r}"
        )
    if quantization == "int8" and representative_dataset is None:
        raise ValueError(
            '`quantization="int8"` needs a `representative_dataset`: a callable '
            "yielding samples {input name: array}, to calibrate activation ranges."
        )
    if quantization in RECIPE_NAMES:
        import_ai_edge_quantizer(quantization)  # fail before converting


def check_sequence_lengths(sequence_lengths):
    lengths = list(sequence_lengths) if isinstance(sequence_lengths, (list, tuple)) else None
    if not lengths or any(
        isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1 for n in lengths
    ):
        raise ValueError(
            "`sequence_lengths` must be a non-empty list of positive ints (a .tflite "
            "file needs at least one token per sequence). "
            f"Received: sequence_lengths={sequence_lengths!r}"
        )


def check_latency_runs(latency_runs):
    if isinstance(latency_runs, bool) or not isinstance(latency_runs, (int, np.integer)) or (
        latency_runs < 0
    ):
        raise ValueError(
            f"`latency_runs` must be an int >= 0. Received: latency_runs={latency_runs!r}"
        )


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


def flatbuffer_facts(flatbuffer, embedding):
    """The report's fields a `.tflite` file alone tells."""
    runner = interpreter_runner(flatbuffer)
    return dict(
        embedding_bytes=embedding_constant_bytes(flatbuffer, embedding),
        ops=op_names(flatbuffer),
        quantized_ops=quantized_op_count(flatbuffer),
        constant_bytes=constant_bytes(flatbuffer),
        outputs=tuple(sorted(runner.get_output_details())),
    )


def verify_flatbuffer(model, serving_inputs, flatbuffer, samples, quantization, path):
    """(max abs error, its tolerance, cosine) of every output over `samples`, or raise.

    Each output is held to `TOLERANCES[quantization]` times its own largest
    |Keras value| (at least 1). The cosine is that of the file's output rows
    (last axis) to Keras', averaged per output; the lowest output's.
    """
    import tensorflow as tf

    # Eager: a tf.function per export would be traced anew for every sample
    # length and every model, and TensorFlow warns of retracing after five.
    keras_function = serving_function(model, serving_inputs)
    runner = interpreter_runner(flatbuffer)
    rounded_function = None
    if quantization == "dynamic" or quantization in RECIPE_NAMES:
        rounded = (int8_rounded(model) if quantization == "dynamic"
                   else round_weights(copy_model(model), quantization))
        rounded_function = serving_function(rounded, serving_inputs)
    errors, scales, rounding_errors, cosines = {}, {}, {}, {}
    for sample in samples:
        tensors = {name: tf.constant(value) for name, value in sample.items()}
        want = keras_function(tensors)
        got = runner(**sample)
        if rounded_function is not None:
            for name, value in rounded_function(tensors).items():
                error = float(np.max(np.abs(np.asarray(value, "float64") - np.asarray(want[name]))))
                rounding_errors[name] = max(rounding_errors.get(name, 0.0), error)
        if set(got) != set(want):
            raise ExportVerificationError(
                f"The .tflite outputs are {sorted(got)}; Keras gives {sorted(want)}."
            )
        for name, value in want.items():
            value = np.asarray(value)
            if got[name].shape != value.shape:
                raise ExportVerificationError(
                    f"The .tflite output {name!r} has shape {got[name].shape}; "
                    f"Keras gives {value.shape}."
                )
            error = float(np.max(np.abs(got[name].astype("float64") - value)))
            errors[name] = max(errors.get(name, 0.0), error)
            scales[name] = max(scales.get(name, 0.0), float(np.max(np.abs(value))))
            cosines.setdefault(name, []).extend(row_cosines(got[name], value))
    tolerances = {name: TOLERANCES[quantization] * max(1.0, scales[name]) for name in errors}
    for name, error in rounding_errors.items():
        # Held to what int8 weights can cause, so a file with other weights fails.
        floor = TOLERANCES[None] * max(1.0, scales[name])
        tolerances[name] = min(tolerances[name], max(DYNAMIC_ERROR_FACTOR * error, floor))
    failed = [name for name in errors if not errors[name] <= tolerances[name]]
    if failed:
        worst = max(failed, key=lambda name: errors[name] - tolerances[name])
        raise ExportVerificationError(
            f"The .tflite output {worst!r} differs from Keras by up to {errors[worst]:.3g} "
            f"(tolerance {tolerances[worst]:.3g} for quantization={quantization!r}); "
            f"{str(path)!r} was not written."
        )
    largest = max(errors, key=errors.get)
    return errors[largest], tolerances[largest], min(float(np.mean(c)) for c in cosines.values())


def row_cosines(got, want):
    """Cosine of each row (last axis) of `got` to `want`; rows of zeros count 1 if equal."""
    got = np.asarray(got, "float64").reshape(-1, max(1, np.shape(got)[-1] if np.ndim(got) else 1))
    want = np.asarray(want, "float64").reshape(got.shape)
    norms = np.linalg.norm(got, axis=-1) * np.linalg.norm(want, axis=-1)
    dots = np.sum(got * want, axis=-1)
    same = np.all(got == want, axis=-1)
    return np.where(norms > 0, dots / np.where(norms > 0, norms, 1.0), np.where(same, 1.0, 0.0))


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


def median_latency_ms(flatbuffer, samples, serving_inputs, runs):
    """(median ms, length) of the longest sample's first sequence, 1 thread."""
    longest = max(samples, key=lambda s: sequence_length_of(s, serving_inputs) or 0)
    sample = {name: value[:1] for name, value in longest.items()}
    runner = interpreter_runner(flatbuffer, num_threads=1)
    runner(**sample)  # allocate for this shape
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        runner(**sample)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), sequence_length_of(sample, serving_inputs)
