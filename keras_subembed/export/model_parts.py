"""Finding what export needs inside a model: the model itself, its limits, its metadata."""

import os
import pathlib
import re
import tempfile
import zipfile

import keras
import numpy as np

# Registers every class a `.keras` file may name, before `load_model` reads one.
import keras_subembed.models  # noqa: F401
from keras_subembed.layer_walk import walk_layers
from keras_subembed.layers.compressed_embedding import CompressedEmbedding
from keras_subembed.models.families.token_embedding import find_token_embedding
from keras_subembed.tokenizer_kinds import tokenizer_kind_of

EMBEDDING_MODES = ("compressed", "frozen")


def model_path(model):
    """The `.keras` path given as `model`, or None for a live model."""
    if isinstance(model, keras.Model):
        return None
    if not isinstance(model, (str, os.PathLike)):
        raise TypeError(
            f"`model` must be a keras.Model or a path to a .keras file. Received: {model!r}"
        )
    path = pathlib.Path(model)
    if not path.is_file():
        raise FileNotFoundError(f"No model file at `model={str(path)!r}`.")
    return path


def load_model(model):
    """A Keras model, or one loaded from a `.keras` path with a clear error."""
    path = model_path(model)
    if path is None:
        return model
    # Keras reports a truncated or foreign file as "File not found".
    try:
        with zipfile.ZipFile(path) as archive:
            damaged = archive.testzip()
    except (zipfile.BadZipFile, OSError):
        damaged = True
    if damaged:
        raise ValueError(
            f"Could not read a Keras model from {str(path)!r}: it is not a complete "
            ".keras (zip) file; it may be truncated or in another format."
        )
    try:
        return keras.saving.load_model(path, compile=False)
    except Exception as error:  # an unknown layer class, a foreign archive, ...
        raise ValueError(f"Could not read a Keras model from {str(path)!r}: {error}") from error


def check_float_kernels(model):
    """`model`, unless a `fake_quantized` block rounds its kernels now: a file
    converted from it would hold rounded kernels under another label."""
    rounded = [layer.name for layer in walk_layers(model)
               if getattr(layer, "_fake_quant", None) is not None]
    if rounded:
        raise ValueError(
            f"`model` is inside a `fake_quantized` block: its layers {rounded[:3]} compute "
            "with rounded kernels, which a float or dynamic-range file would hold under "
            "its own label. Export after the block; a recipe (e.g. "
            "quantization='int4_dynamic') stores the rounded kernels as the block computes."
        )
    return model


def check_embedding_mode(embedding_mode):
    """`embedding_mode`, once it is one of `EMBEDDING_MODES`."""
    if embedding_mode not in EMBEDDING_MODES:
        raise ValueError(
            f"`embedding_mode` must be one of {EMBEDDING_MODES}. "
            f"Received: embedding_mode={embedding_mode!r}"
        )
    return embedding_mode


def freeze_speeds_up(layer):
    """Whether `layer.freeze()` makes lookups faster (its class says so)."""
    return isinstance(layer, CompressedEmbedding) and type(layer).freeze_speeds_up


def with_embedding_mode(model, embedding_mode):
    """`model`, or for "frozen" a copy whose slow-to-compute embeddings are tables."""
    check_embedding_mode(embedding_mode)
    if embedding_mode == "compressed" or not any(map(freeze_speeds_up, walk_layers(model))):
        return model
    copy = copy_model(model)  # the caller's model keeps its compressed layers
    for layer in walk_layers(copy):
        if freeze_speeds_up(layer):
            layer.freeze()
    return copy


def embedding_rotations(model):
    """The float32 `(d, d)` rotations of the compressed embeddings in `model`
    (`SubEmbedding(rotation=True)`). They are matmul weights that belong to the
    table: a format stores them with the table's precision (int8), not with the
    transformer kernels' (int4)."""
    return [np.asarray(keras.ops.convert_to_numpy(layer.rotation_matrix), "float32")
            for layer in walk_layers(model)
            if getattr(layer, "rotation_matrix", None) is not None]


def copy_model(model):
    """An independent copy of `model`, weights included (through a `.keras` file)."""
    with tempfile.TemporaryDirectory() as tmp:
        model.save(f"{tmp}/copy.keras")
        return keras.saving.load_model(f"{tmp}/copy.keras", compile=False)


def dense_table_bytes(embedding):
    """Bytes of the dense V x d table `embedding` stands for, in its weights' dtype."""
    if embedding is None:
        return 0
    dtype = keras.backend.standardize_dtype(embedding.variable_dtype)
    bits = int(re.search(r"\d+$", dtype).group())
    return embedding.input_dim * embedding.output_dim * bits // 8


def max_sequence_length(model):
    """The longest sequence the model accepts (its backbones' limit), or None."""
    limits = [
        layer.max_sequence_length for layer in walk_layers(model)
        if isinstance(getattr(layer, "max_sequence_length", None), int)
    ]
    return min(limits, default=None)


def tokenizer_of(model):
    return getattr(getattr(model, "preprocessor", None), "tokenizer", None)


def runner_tokenizer_file(model):
    """(`TokenizerKind`, bytes) of the file `device/`'s runners tokenize with,
    written beside `<model>.tflite` (the kind's `runner_suffix`: `.vocab.txt`
    for WordPiece, `.spm` for an XLM-R SentencePiece model); None for a model
    without a tokenizer, or one that holds no vocabulary yet."""
    tokenizer = tokenizer_of(model)
    if tokenizer is None:
        return None
    kind = tokenizer_kind_of(tokenizer)
    data = kind.runner_file(tokenizer)
    return (kind, data) if data else None


def export_metadata(model):
    """What a runner of the `.tflite` file must follow: the number of ids the
    model takes and, when it has a preprocessor, its tokenizer's fingerprint
    (under its kind's `fingerprint_key`) and the normalisation its kind
    records (`lowercase`, `strip_accents` for WordPiece)."""
    values = {}
    embedding = find_token_embedding(model)
    if embedding is not None:
        values["vocabulary_size"] = int(embedding.input_dim)
    found = runner_tokenizer_file(model)
    if found:
        kind, _ = found
        tokenizer = tokenizer_of(model)
        values[kind.fingerprint_key] = kind.fingerprint(tokenizer)
        values.update(kind.runner_settings(tokenizer))
    return values


def weight_shapes(layer):
    """The shapes of `layer`'s weights of more than one value, in either orientation."""
    shapes = {tuple(int(d) for d in weight.shape) for weight in layer.weights}
    return {s for shape in shapes if np.prod(shape) > 1 for s in (shape, shape[::-1])}
