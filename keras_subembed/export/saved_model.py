"""Keras model -> SavedModel with one named, dynamically shaped serving signature."""

import os
import pathlib
import shutil
import tempfile

import keras

from keras_subembed.layers.alone_embedding import ALONEEmbedding
from keras_subembed.layers.compressed_embedding import CompressedEmbedding
from keras_subembed.layers.define_embedding import DeFINEEmbedding

EMBEDDING_MODES = ("compressed", "frozen")
# Layers whose `freeze()` trades file size for speed; SubEmbedding lookups are
# already gathers, so it stays compressed in both modes.
FREEZABLE = (ALONEEmbedding, DeFINEEmbedding)


def load_model(model):
    """A Keras model, or one loaded from a `.keras` path with a clear error."""
    if isinstance(model, keras.Model):
        return model
    if not isinstance(model, (str, os.PathLike)):
        raise TypeError(
            f"`model` must be a keras.Model or a path to a .keras file. Received: {model!r}"
        )
    path = pathlib.Path(model)
    if not path.is_file():
        raise FileNotFoundError(f"No model file at `model={str(path)!r}`.")
    try:
        return keras.saving.load_model(path, compile=False)
    except Exception as error:  # a truncated zip, a foreign format, ...
        raise ValueError(f"Could not read a Keras model from {str(path)!r}: {error}") from error


def check_output_path(path, overwrite):
    path = pathlib.Path(path)
    if path.exists() and not overwrite:
        raise FileExistsError(
            f"{str(path)!r} exists; pass overwrite=True to replace it."
        )
    if not path.parent.exists():
        raise FileNotFoundError(f"The folder of {str(path)!r} does not exist.")
    return path


def with_embedding_mode(model, embedding_mode):
    """`model`, or for "frozen" a copy whose ALONE/DeFINE layers are frozen tables."""
    if embedding_mode not in EMBEDDING_MODES:
        raise ValueError(
            f"`embedding_mode` must be one of {EMBEDDING_MODES}. "
            f"Received: embedding_mode={embedding_mode!r}"
        )
    freezable = [layer for layer in model._flatten_layers() if isinstance(layer, FREEZABLE)]
    if embedding_mode == "compressed" or not freezable:
        return model
    with tempfile.TemporaryDirectory() as tmp:  # an independent copy: the caller's
        model.save(f"{tmp}/copy.keras")  # model keeps its compressed layers
        copy = keras.saving.load_model(f"{tmp}/copy.keras", compile=False)
    for layer in copy._flatten_layers():
        if isinstance(layer, FREEZABLE):
            layer.freeze()
    return copy


def token_embedding_of(model):
    """The model's token embedding layer (backbone, task or plain model), or None."""
    backbone = getattr(model, "backbone", model)
    embedding = getattr(backbone, "token_embedding", None)
    if embedding is not None:
        return embedding
    for layer in model._flatten_layers():
        if isinstance(layer, (CompressedEmbedding, keras.layers.Embedding)):
            return layer
    return None


def serving_specs(model):
    """`{name: TensorSpec}` of the model's inputs, every dimension dynamic."""
    import tensorflow as tf

    specs = {}
    for index, tensor in enumerate(model.inputs):
        name = tensor.name if tensor.name else f"input_{index}"
        specs[name] = tf.TensorSpec((None,) * len(tensor.shape), tensor.dtype, name=name)
    return specs


def serving_function(model):
    """A function of `{input name: tensor}` returning `{"outputs": ...}`."""
    names = list(serving_specs(model))
    takes_dict = isinstance(model.input, dict)

    def serve(inputs):
        if takes_dict:
            arguments = inputs
        elif len(names) == 1:
            arguments = inputs[names[0]]
        else:
            arguments = [inputs[name] for name in names]
        return {"outputs": model(arguments, training=False)}

    return serve


def write_saved_model(model, directory):
    archive = keras.export.ExportArchive()
    archive.track(model)
    archive.add_endpoint(
        "serve", serving_function(model), input_signature=[serving_specs(model)]
    )
    archive.write_out(str(directory), verbose=False)


def export_saved_model(model, path, embedding_mode="compressed", overwrite=False):
    """Write `model` (or a `.keras` path) as a SavedModel with a serving signature.

    The signature `serving_default` takes the model's inputs by name
    (`token_ids`, `padding_mask`, plus `mask_positions` for a masked-LM task)
    with dynamic batch and sequence length, and returns `{"outputs": ...}`.
    The folder is written next to `path` and renamed into place, so a failed
    export leaves nothing behind. Returns the path.

    Example:
    >>> export_saved_model(masked_lm, "mlm_saved_model")
    """
    model = with_embedding_mode(load_model(model), embedding_mode)
    path = check_output_path(path, overwrite)
    staging = pathlib.Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}."))
    try:
        write_saved_model(model, staging / "saved_model")
        if path.exists():
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        os.replace(staging / "saved_model", path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return path
