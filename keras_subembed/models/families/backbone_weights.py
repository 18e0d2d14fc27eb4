"""A compressed backbone's weights: copied from its source, checked against a file."""

import os

import h5py
import keras

from keras_subembed.checks import check_bool

# The weight files keras-hub reads from a preset folder: one file, or the
# index of a sharded one.
PRESET_WEIGHTS_FILES = ("model.weights.h5", "model.weights.json")
_POSITION_TABLE = "position_embedding/"


def _non_embedding_weights(model, rename):
    # `weights`, not `variables`: dropout seed states are named by a global
    # counter and are no model state worth copying.
    skipped = {id(weight) for weight in model.token_embedding.weights}
    return {rename(w.path): w for w in model.weights if id(w) not in skipped}


def copy_non_embedding_weights(source, target, rename=lambda path: path):
    """Assign every weight of `source` outside its token embedding to `target`'s.

    Weights are matched by path (`transformer_layer_0/.../kernel`), after
    `rename` on both sides; the two sets must be the same, which is what
    makes the copy exact.
    """
    source_variables = _non_embedding_weights(source, rename)
    target_variables = _non_embedding_weights(target, rename)
    if source_variables.keys() != target_variables.keys():
        missing = sorted(source_variables.keys() ^ target_variables.keys())
        raise ValueError(
            f"The backbones' non-embedding weights differ: {missing[:5]} "
            f"({len(missing)} in all)."
        )
    for path, variable in target_variables.items():
        # A copy, not the source's buffer: JAX donates variable buffers to
        # compiled steps, which would delete one model's weights under the other.
        value = keras.ops.convert_to_numpy(source_variables[path])
        if tuple(variable.shape) != value.shape and _POSITION_TABLE in path:
            value = value[: variable.shape[0]]  # a shortened model keeps the first positions
        variable.assign(value)


def token_embedding_mismatch(embedding, filepath):
    """A message naming how `embedding`'s weights differ from those stored for it
    in the `.weights.h5` file, or None when they agree (or cannot be read)."""
    stored = []

    def visit(name, item):
        if isinstance(item, h5py.Group) and item.attrs.get("name") == embedding.name:
            stored.extend(tuple(item[key].shape) for key in sorted(item, key=int))

    try:
        with h5py.File(filepath, "r") as file:
            file.visititems(visit)
    except (OSError, ValueError):
        return None
    wanted = [(weight.path.split("/")[-1], tuple(weight.shape)) for weight in embedding.weights]
    if stored == [shape for _, shape in wanted]:
        return None
    config = {key: value for key, value in embedding.get_config().items()
              if key in ("input_dim", "output_dim", "num_tables", "rows_per_table", "pack_codes")}
    return (
        f"The weights file {str(filepath)!r} does not fit the model its config describes: "
        f"the token embedding {embedding.name!r} ({type(embedding).__name__}, {config}) needs "
        f"weights {', '.join(f'{name} {shape}' for name, shape in wanted)}; the file holds "
        f"{', '.join(map(str, stored)) or 'none under that name'}. Was the preset's "
        "config.json or task.json edited?"
    )


def check_preset_weights(preset, load_weights):
    """`load_weights` checked; when true, a `FileNotFoundError` naming
    `model.weights.h5` if the local preset folder `preset` has no weights
    (keras-hub would name only the sharded index)."""
    if not check_bool("load_weights", load_weights):
        return False
    if not isinstance(preset, (str, os.PathLike)) or not os.path.isdir(preset):
        return True  # a hub handle: keras-hub downloads and names what it misses
    single, sharded = PRESET_WEIGHTS_FILES
    if not any(os.path.isfile(os.path.join(preset, name)) for name in PRESET_WEIGHTS_FILES):
        raise FileNotFoundError(
            f"The preset {str(preset)!r} has no weights: {single} is missing "
            f"(nor is it sharded: no {sharded})."
        )
    return True
