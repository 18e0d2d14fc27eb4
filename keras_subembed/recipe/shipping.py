"""The files a shrink ships: one per runtime, at the transformer's quantization."""

import pathlib

import numpy as np

from keras_subembed import files
from keras_subembed.checks import check_bool
from keras_subembed.checks import check_non_negative_int
from keras_subembed.checks import check_positive_int
from keras_subembed.evaluation.runners import onnx_runner
from keras_subembed.evaluation.runners import tflite_runner
from keras_subembed.export.mediapipe.mediapipe_embedder import MediaPipeEmbedder
from keras_subembed.export.pipeline import export
from keras_subembed.quantization.recipes import get_recipe
from keras_subembed.recipe.memory import release_memory

FORMATS = ("tflite", "mediapipe", "onnx")
SUFFIXES = {"tflite": ".{recipe}.tflite", "mediapipe": ".mediapipe.tflite", "onnx": ".onnx"}


def check_formats(formats):
    if isinstance(formats, str):
        formats = (formats,)
    if not isinstance(formats, (list, tuple)) or not formats or any(
            format_ not in FORMATS for format_ in formats):
        raise ValueError(f"`formats` must be a non-empty list of {list(FORMATS)}. "
                         f"Received: formats={formats!r}")
    return tuple(dict.fromkeys(formats))


def onnx_quantization(recipe):
    """ONNX Runtime's nearest weight quantization to a `.tflite` recipe: int4 blocks
    (MatMulNBits) for an int4 recipe, else int8."""
    return "int4" if recipe.startswith("int4") else "dynamic"


def ship(embedder, output, name, formats=FORMATS, recipe="int4_dynamic", mediapipe_length=None,
         overwrite=False, latency_runs=20):
    """Exports `embedder` to `output/<name>.<recipe>.tflite`, `<name>.mediapipe.tflite` and
    `<name>.onnx` (as `formats` asks), each verified in its runtime, with the tokenizer file
    beside it. Returns `{format: ExportReport}`.

    Example:
    ```python
    reports = ship(student, "out", "split-h8k-k64", recipe="int4_dynamic")
    reports["mediapipe"].file_bytes
    ```
    """
    formats = check_formats(formats)
    recipe = get_recipe(recipe, "recipe").name
    if not isinstance(name, str) or not name or "/" in name:
        raise ValueError(f"`name` must be a file name (a non-empty str without '/'). "
                         f"Received: name={name!r}")
    if mediapipe_length is not None:
        check_positive_int("mediapipe_length", mediapipe_length)
    check_bool("overwrite", overwrite)
    check_non_negative_int("latency_runs", latency_runs)
    output = files.as_path(output)
    arguments = {
        "tflite": dict(quantization=recipe, latency_runs=latency_runs),
        "mediapipe": dict(quantization=recipe, sequence_length=mediapipe_length,
                          latency_runs=latency_runs),
        "onnx": dict(quantization=onnx_quantization(recipe)),
    }
    reports = {}
    for format_ in formats:
        path = output / (name + SUFFIXES[format_].format(recipe=recipe))
        reports[format_] = export(embedder, path, format=format_, overwrite=overwrite,
                                  **arguments[format_])
        release_memory()  # an export's graphs and buffers: GBs for a real model
    return reports


def file_runner(format_, path):
    """How `LanguageEvaluation.measure` runs a shipped file: `{"run_batch": ...}` for a file
    fed token ids, `{"embed_texts": ...}` for MediaPipe, which tokenizes raw text itself."""
    if format_ == "tflite":
        return {"run_batch": tflite_runner(path)}
    if format_ == "onnx":
        return {"run_batch": onnx_runner(path)}
    task = MediaPipeEmbedder(pathlib.Path(path).read_bytes())

    def embed_texts(texts):
        with task:
            return np.stack([task.embed(text) for text in texts])

    return {"embed_texts": embed_texts}
