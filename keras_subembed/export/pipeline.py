"""`export(model, filepath, format=...)`: one pipeline for every file format.

check -> stage -> convert -> verify -> write -> report. A format
(`ExportFormat`) holds only what is its own and is registered by name.
"""

from keras_subembed import files
from keras_subembed.checks import is_real
from keras_subembed.export import tensorflow_process
from keras_subembed.export.export_format import ExportFormat
from keras_subembed.export.model_parts import check_float_kernels
from keras_subembed.export.model_parts import load_model
from keras_subembed.export.model_parts import model_path

FORMATS = {}


def register_format(name):
    """A class decorator registering an `ExportFormat` as `export(..., format=name)`.

    Example:
    >>> @register_format("npz")
    ... class NpzFormat(ExportFormat):
    ...     ...
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"`name` must be a non-empty str (what `export(..., format=name)` "
                        f"takes). Received: name={name!r}")

    def register(cls):
        if not (isinstance(cls, type) and issubclass(cls, ExportFormat)):
            raise TypeError(f"`register_format({name!r})` decorates a subclass of "
                            f"`ExportFormat`. Received: {cls!r}")
        if name in FORMATS:
            raise ValueError(f"The export format {name!r} is registered already.")
        check_bounds(cls, "tolerances", cls.tolerances,
                     "the largest abs error, a fraction of the largest |output|")
        if cls.min_cosines is not None:
            check_bounds(cls, "min_cosines", cls.min_cosines, "the lowest mean cosine")
        cls.format_name = name
        FORMATS[name] = cls
        return cls

    return register


def check_bounds(cls, attribute, bounds, what):
    """`cls.<attribute>` gives each of `cls.quantizations` a number in (0, 1], or a clear error."""
    label = f"`{cls.__name__}.{attribute}`"
    if not isinstance(bounds, dict):
        raise TypeError(f"{label} must be a dict {{quantization: {what}}}. "
                        f"Received: {attribute}={bounds!r}")
    missing = [quantization for quantization in cls.quantizations if quantization not in bounds]
    if missing:
        raise ValueError(f"{label} must have an entry for each of `quantizations` "
                         f"{cls.quantizations}; it lacks {missing}. Received: {attribute}={bounds!r}")
    for quantization, bound in bounds.items():
        # 0 passes no file (float arithmetic differs in its last bits); beyond 1 checks nothing.
        if not (is_real(bound) and 0 < bound <= 1):
            raise ValueError(f"`{cls.__name__}.{attribute}[{quantization!r}]` must be a number "
                             f"in (0, 1] ({what}). "
                             f"Received: {attribute}[{quantization!r}]={bound!r}")


def export(model, filepath, format="tflite", overwrite=False, **kwargs):
    """Export `model` (or a `.keras` path) as a verified file for a runtime.

    Every format runs the same steps: the arguments and the target are
    checked before any work; the model is staged and converted; the file is
    run on sample inputs and compared with Keras (any NaN or infinity, or an
    error beyond the format's tolerance, raises `ExportVerificationError`
    and writes nothing); it is written atomically beside its target and
    moved into place, with the model's tokenizer beside it where the
    format's runners read it (`tokenizer_file`, `.tflite` and `.onnx`); an
    `ExportReport` says what it holds. On a backend
    other than TensorFlow the export runs in a TensorFlow subprocess on a
    `.keras` file.

    Args:
        model: a `keras.Model` or a path to a `.keras` file.
        filepath: the file (a folder for `"saved_model"`) to write.
        format: `"tflite"` (LiteRT, builtin ops only), `"mediapipe"` (a
            `.tflite` file that MediaPipe Tasks' `TextEmbedder` runs from raw
            text), `"onnx"` (ONNX Runtime) or `"saved_model"`. Defaults to
            `"tflite"`.
        overwrite: bool, replace an existing file at `filepath` that an
            export wrote (never another file). Defaults to `False`.
        **kwargs: the format's own arguments: see `export_tflite`,
            `export_mediapipe`, `export_onnx` and `export_saved_model`
            (`quantization`, `verify`, `sample_inputs`, `latency_runs`, ...).

    Returns:
        An `ExportReport` (the SavedModel's path for `"saved_model"`).

    Example:
    ```python
    report = export(embedder, "minilm.tflite", format="tflite", quantization="dynamic")
    print(report)
    ```
    """
    if not isinstance(format, str) or format not in FORMATS:
        raise ValueError(f"`format` must be one of {sorted(FORMATS)}. Received: format={format!r}")
    exporter = FORMATS[format](**kwargs)  # the format's own checks
    source = model_path(model)
    path = exporter.check_target(filepath, overwrite, keep=[source] if source else ())
    if not tensorflow_process.is_tensorflow_backend():
        return tensorflow_process.run_export(
            model, source, exporter.saves_live_model, filepath=str(path), format=format,
            overwrite=overwrite, **kwargs)
    model = check_float_kernels(load_model(model))
    tokenizer = exporter.check_tokenizer_file(model, path, overwrite,
                                              keep=[source] if source else ())
    staged = exporter.stage(model, tokenizer)
    data = exporter.convert(staged, files.staging_name(path))
    checks = exporter.measure(staged, data, path)
    # The report reads the file's bytes (a format's `file_facts` may fail): made
    # before the file moves into place, a failure leaves nothing behind.
    report = exporter.report(staged, path, data, checks)
    exporter.write(staged, path, data, overwrite)
    return report
