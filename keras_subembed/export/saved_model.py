"""Keras model -> SavedModel with one named, dynamically shaped serving signature."""

import keras

from keras_subembed import files
from keras_subembed.export import tensorflow_process
from keras_subembed.export.model_parts import check_embedding_mode
from keras_subembed.export.model_parts import load_model
from keras_subembed.export.model_parts import model_path
from keras_subembed.export.model_parts import with_embedding_mode
from keras_subembed.export.signature import ServingInputs
from keras_subembed.export.signature import serving_function


def write_saved_model(model, directory, serving_inputs):
    """Write `model` to `directory` with the signature `serving_default`."""
    archive = keras.export.ExportArchive()
    archive.track(model)
    archive.add_endpoint(
        "serve", serving_function(model, serving_inputs),
        input_signature=[serving_inputs.tensor_specs()],
    )
    archive.write_out(str(directory), verbose=False)


def export_saved_model(model, path, embedding_mode="compressed", overwrite=False,
                       sample_inputs=None):
    """Write `model` (or a `.keras` path) as a SavedModel with a serving signature.

    The signature `serving_default` takes the model's inputs by name (the
    keys of a dict input, else the input tensors' names) with dynamic batch
    and sequence length, and returns the model's outputs by name (the keys
    of a dict output, else `"outputs"`). Subclassed models declare no
    inputs: give `sample_inputs` (see `export_tflite`). The folder is staged
    beside `path` and renamed into place, so a failed export leaves nothing
    behind; `overwrite=True` replaces only an existing SavedModel. On a
    backend other than TensorFlow, pass a `.keras` path: it is exported in a
    TensorFlow subprocess. Returns the path.

    Example:
    >>> export_saved_model(masked_lm, "mlm_saved_model")
    """
    check_embedding_mode(embedding_mode)
    source = model_path(model)
    path = files.check_folder_target(path, overwrite, keep=[source] if source else ())
    if not tensorflow_process.is_tensorflow_backend():
        return tensorflow_process.run_export(
            "export_saved_model", model, source, path=str(path),
            embedding_mode=embedding_mode, overwrite=overwrite, sample_inputs=sample_inputs)
    model = with_embedding_mode(load_model(model), embedding_mode)
    serving_inputs = ServingInputs.of(model, sample_inputs)
    with files.staged_folder(path, overwrite) as staging:
        write_saved_model(model, staging, serving_inputs)
    return path
