"""Finding what export needs inside a model: the model itself, its limits, its metadata."""

import os
import pathlib
import re
import tempfile
import zipfile

import keras
import keras_hub

# Registers every class a `.keras` file may name, before `load_model` reads one.
import keras_subembed.models  # noqa: F401
from keras_subembed.files import sentencepiece_fingerprint
from keras_subembed.files import vocabulary_fingerprint
from keras_subembed.files import vocabulary_text
from keras_subembed.layer_walk import walk_layers
from keras_subembed.layers.compressed_embedding import CompressedEmbedding
from keras_subembed.models.token_embedding import find_token_embedding

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


def check_embedding_mode(embedding_mode):
    if embedding_mode not in EMBEDDING_MODES:
        raise ValueError(
            f"`embedding_mode` must be one of {EMBEDDING_MODES}. "
            f"Received: embedding_mode={embedding_mode!r}"
        )


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


def vocabulary_of(model):
    """The model's WordPiece vocabulary (from its preprocessor), or None."""
    return getattr(tokenizer_of(model), "vocabulary", None) or None


def sentencepiece_model_of(model):
    """The serialized SentencePiece model of the model's XLM-R tokenizer, or None."""
    tokenizer = tokenizer_of(model)
    if isinstance(tokenizer, keras_hub.tokenizers.XLMRobertaTokenizer):
        return tokenizer.proto
    return None


def runner_tokenizer_file(model):
    """(suffix, bytes) of the file `device/`'s runners tokenize with, written
    beside `<model>.tflite`: `.vocab.txt` (WordPiece) or `.spm` (an XLM-R
    SentencePiece model); None for a model without a tokenizer."""
    vocabulary = vocabulary_of(model)
    if vocabulary:
        return ".vocab.txt", vocabulary_text(vocabulary).encode("utf-8")
    proto = sentencepiece_model_of(model)
    return (".spm", proto) if proto else None


def export_metadata(model):
    """What a runner of the `.tflite` file must follow: the number of ids the
    model takes and, when it has a preprocessor, its vocabulary's (or
    SentencePiece model's) fingerprint and text normalisation (`lowercase`,
    `strip_accents`)."""
    values = {}
    embedding = find_token_embedding(model)
    if embedding is not None:
        values["vocabulary_size"] = int(embedding.input_dim)
    proto = sentencepiece_model_of(model)
    if proto:
        values["sentencepiece_sha256"] = sentencepiece_fingerprint(proto)
    vocabulary = vocabulary_of(model)
    if vocabulary:
        values["vocabulary_sha256"] = vocabulary_fingerprint(vocabulary)
        tokenizer = model.preprocessor.tokenizer
        for name in ("lowercase", "strip_accents"):
            if isinstance(getattr(tokenizer, name, None), bool):
                values[name] = getattr(tokenizer, name)
    return values
