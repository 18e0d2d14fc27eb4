"""Keras model -> small, builtins-only, verified `.tflite` file."""

import os
import pathlib
import re
import statistics
import tempfile
import time

import numpy as np

from keras_subembed.export.export_report import ExportReport
from keras_subembed.export.flatbuffer import embedding_constant_bytes
from keras_subembed.export.flatbuffer import op_names
from keras_subembed.export.saved_model import check_output_path
from keras_subembed.export.saved_model import load_model
from keras_subembed.export.saved_model import serving_specs
from keras_subembed.export.saved_model import token_embedding_of
from keras_subembed.export.saved_model import with_embedding_mode
from keras_subembed.export.saved_model import write_saved_model

QUANTIZATIONS = (None, "dynamic", "float16", "int8")
# Allowed max abs error, as a fraction of the largest |Keras output| (at least 1).
TOLERANCES = {None: 1e-4, "float16": 1e-2, "dynamic": 0.1, "int8": 0.25}
SIGNATURE = "serving_default"


class ExportVerificationError(ValueError):
    """The `.tflite` file disagrees with Keras beyond the tolerance."""


class UnsupportedOpError(ValueError):
    """The model needs an op that is not a TFLite builtin."""


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
    latency_runs=20,
):
    """Convert `model` (or a `.keras` path) to a builtins-only `.tflite` file.

    Conversion goes Keras -> SavedModel (`keras.export.ExportArchive`) ->
    `tf.lite.TFLiteConverter.from_saved_model` with `TFLITE_BUILTINS` only, so
    the file runs in the standalone LiteRT interpreter (no Flex / select-TF
    ops). The signature is `serving_default`, inputs by name (`token_ids`,
    `padding_mask`, `mask_positions`), dynamic batch and sequence length.

    Args:
        model: a `keras.Model` or a path to a `.keras` file.
        path: the `.tflite` file to write (atomically: a temporary file in the
            same folder, renamed only after verification passed).
        quantization: `None` (float32), `"dynamic"` (int8 weights), `"float16"`
            or `"int8"` (weights and activations; needs
            `representative_dataset`, a callable yielding input lists).
        embedding_mode: `"compressed"` keeps the compressed computation in the
            file (small); `"frozen"` stores ALONE / DeFINE embeddings as one
            lookup table (fast). SubEmbedding stays compressed in both.
        verify: run the file with `ai_edge_litert` on sample inputs (valid
            ids, padding, each of `sequence_lengths`) and compare with Keras;
            exceeding `TOLERANCES[quantization]` raises
            `ExportVerificationError` and writes nothing.
        overwrite: replace an existing `path`.
        sample_inputs: list of `{input name: array}` to verify on instead.

    Returns:
        An `ExportReport` (print it, or `.as_dict()` / `.to_json()`).

    Example:
    >>> report = export_tflite(masked_lm, "mlm.tflite", quantization="dynamic")
    >>> print(report)
    """
    if quantization not in QUANTIZATIONS:
        raise ValueError(
            f"`quantization` must be one of {QUANTIZATIONS}. "
            f"Received: quantization={quantization!r}"
        )
    if quantization == "int8" and representative_dataset is None:
        raise ValueError(
            '`quantization="int8"` needs a `representative_dataset`: a callable '
            "yielding lists of sample inputs, to calibrate activation ranges."
        )
    path = check_output_path(path, overwrite)
    model = with_embedding_mode(load_model(model), embedding_mode)
    flatbuffer = convert(model, quantization, representative_dataset)
    max_error, lengths, tolerance = 0.0, (), TOLERANCES[quantization]
    if verify:
        inputs = sample_inputs or make_sample_inputs(model, sequence_lengths)
        max_error, scale = compare_with_keras(model, flatbuffer, inputs)
        tolerance = TOLERANCES[quantization] * max(1.0, scale)
        lengths = tuple(sorted({int(ids_of(x).shape[-1]) for x in inputs}))
        if not max_error <= tolerance:
            raise ExportVerificationError(
                f"The .tflite outputs differ from Keras by up to {max_error:.3g} "
                f"(tolerance {tolerance:.3g} for quantization={quantization!r}); "
                f"{str(path)!r} was not written."
            )
    latency = median_latency_ms(model, flatbuffer, latency_runs) if latency_runs else float("nan")
    write_atomically(path, flatbuffer)
    embedding = token_embedding_of(model)
    dense_bytes = 0 if embedding is None else 4 * embedding.input_dim * embedding.output_dim
    return ExportReport(
        path=str(path),
        quantization=quantization or "float32",
        embedding_mode=embedding_mode,
        file_bytes=len(flatbuffer),
        embedding_bytes=embedding_constant_bytes(flatbuffer, embedding),
        dense_embedding_bytes=dense_bytes,
        ops=op_names(flatbuffer),
        max_abs_error=float(max_error),
        tolerance=float(tolerance),
        verified_sequence_lengths=lengths,
        latency_ms=latency,
        latency_sequence_length=latency_length(model),
    )


def convert(model, quantization=None, representative_dataset=None):
    """The `.tflite` bytes of `model`, builtin ops only, through a SavedModel."""
    import tensorflow as tf

    with tempfile.TemporaryDirectory() as tmp:
        write_saved_model(model, f"{tmp}/saved_model")
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
    layer_names = {layer.name for layer in model._flatten_layers()}
    locations = re.findall(r'"([^"]*/[^"]*)"', text)  # op paths: "model_1/layer_1/op@fn"
    parts = {re.sub(r"_\d+$", "", part) for loc in locations for part in loc.split("/")}
    layers = sorted(parts & layer_names)
    where = f" (in layer {', '.join(layers)})" if layers else ""
    return UnsupportedOpError(
        f"The model needs op(s) {', '.join(ops)}{where}, which are not TFLite builtins. "
        "The standalone LiteRT interpreter cannot run Flex (select TF) ops, so the "
        "export refuses them."
    )


def write_atomically(path, data):
    path = pathlib.Path(path)
    handle, staging = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(staging, path)
    except BaseException:
        pathlib.Path(staging).unlink(missing_ok=True)
        raise


def ids_of(sample):
    """The token-id array of a sample (by name, else the first input)."""
    return sample.get("token_ids", next(iter(sample.values())))


def vocabulary_size_of(model):
    embedding = token_embedding_of(model)
    return 2 if embedding is None else int(embedding.input_dim)


def latency_length(model):
    backbone = getattr(model, "backbone", model)
    return int(min(128, getattr(backbone, "max_sequence_length", 128)))


def make_sample_inputs(model, sequence_lengths, batch_size=2, seed=0):
    """Valid inputs by name: token ids with trailing padding, and mask positions."""
    rng = np.random.default_rng(seed)
    vocabulary = vocabulary_size_of(model)
    names = list(serving_specs(model))
    samples = []
    max_length = getattr(getattr(model, "backbone", model), "max_sequence_length", None)
    for length in sequence_lengths:
        length = int(length if max_length is None else min(length, max_length))
        lengths = [length, max(2, length // 2)][:batch_size]  # the second row is padded
        token_ids = rng.integers(1, vocabulary, size=(batch_size, length)).astype("int32")
        padding_mask = (np.arange(length)[None, :] < np.array(lengths)[:, None]).astype("int32")
        token_ids = token_ids * padding_mask
        sample = {}
        for name in names:
            if name == "padding_mask":
                sample[name] = padding_mask
            elif name == "mask_positions":
                count = min(5, min(lengths))
                sample[name] = np.stack(
                    [np.sort(rng.choice(n, count, replace=False)) for n in lengths]
                ).astype("int32")
            else:
                sample[name] = token_ids
        samples.append(sample)
    return samples


def interpreter_runner(flatbuffer, num_threads=None):
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_content=flatbuffer, num_threads=num_threads)
    return interpreter.get_signature_runner(SIGNATURE)


def compare_with_keras(model, flatbuffer, samples):
    """(max abs error, largest |Keras output|) over all samples."""
    import tensorflow as tf

    from keras_subembed.export.saved_model import serving_function

    keras_function = tf.function(serving_function(model))
    runner = interpreter_runner(flatbuffer)
    max_error, scale = 0.0, 0.0
    for sample in samples:
        want = np.asarray(keras_function({k: tf.constant(v) for k, v in sample.items()})["outputs"])
        got = runner(**sample)["outputs"]
        if got.shape != want.shape:
            raise ExportVerificationError(
                f"The .tflite output has shape {got.shape}; Keras gives {want.shape}."
            )
        max_error = max(max_error, float(np.max(np.abs(got.astype("float64") - want))))
        scale = max(scale, float(np.max(np.abs(want))))
    return max_error, scale


def median_latency_ms(model, flatbuffer, runs):
    """Median ms of one sequence (batch 1, up to 128 tokens), 1 interpreter thread."""
    (sample,) = make_sample_inputs(model, [latency_length(model)], batch_size=1, seed=1)
    runner = interpreter_runner(flatbuffer, num_threads=1)
    runner(**sample)  # allocate for this shape
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        runner(**sample)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)
