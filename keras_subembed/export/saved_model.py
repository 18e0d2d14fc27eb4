"""Keras model -> SavedModel with one named, dynamically shaped serving signature."""

import keras

from keras_subembed import files
from keras_subembed.export.export_format import ExportFormat
from keras_subembed.export.pipeline import export
from keras_subembed.export.pipeline import register_format
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


@register_format("saved_model")
class SavedModelFormat(ExportFormat):
    """A SavedModel folder with the signature `serving_default` (see `export_saved_model`)."""

    description = "a SavedModel folder"
    saves_live_model = False

    def __init__(self, embedding_mode="compressed", sample_inputs=None):
        # The folder keeps its tokenizer with the model (assets): none beside it.
        super().__init__(verify=False, sample_inputs=sample_inputs, embedding_mode=embedding_mode,
                         tokenizer_file=False)

    def check_target(self, path, overwrite, keep):
        return files.check_folder_target(path, overwrite, keep)

    def convert(self, staged, scratch):
        return None  # written into its staging folder by `write`

    def write(self, staged, path, data, overwrite):
        with files.staged_folder(path, overwrite) as staging:
            write_saved_model(staged.model, staging, staged.serving_inputs)

    def report(self, staged, path, data, checks):
        return path


def export_saved_model(model, path, **kwargs):
    """`export(model, path, format="saved_model", **kwargs)`: a SavedModel folder.

    The signature `serving_default` takes the model's inputs by name (the
    keys of a dict input, else the input tensors' names) with dynamic batch
    and sequence length, and returns the model's outputs by name (the keys
    of a dict output, else `"outputs"`). Subclassed models declare no
    inputs: give `sample_inputs` (see `export_tflite`). `embedding_mode` is
    as for `export_tflite`. The folder is staged beside `path` and renamed
    into place, so a failed export leaves nothing behind; `overwrite=True`
    replaces only an existing SavedModel. On a backend other than
    TensorFlow, pass a `.keras` path: it is exported in a TensorFlow
    subprocess. Returns the path.

    Example:
    ```python
    export_saved_model(masked_lm, "mlm_saved_model")
    ```
    """
    return export(model, path, format="saved_model", **kwargs)
