"""keras-hub presets saved without ever replacing a user's files.

keras-hub's `save_to_preset` writes `config.json`, `model.weights.h5`,
`tokenizer.json`, ... into any folder, over whatever is there: a Hugging
Face model folder (the teacher's own) or a user's Keras files. Here a
preset is written under a staging name beside its target and moved into
place at the end, as the export writes its files; an existing folder is
replaced only with `overwrite=True` and only when this package wrote it,
proven by the marker `keras_subembed.json`, which lists the entries it
wrote, nested ones included (a folder where anything else appeared, at any
depth, is not replaced either).
"""

import contextlib
import json
import os
import pathlib
import threading

import keras_hub

from keras_subembed import files
from keras_subembed.checks import check_bool
from keras_subembed.files import WRITTEN_BY
from keras_subembed.files import read_json_object
from keras_subembed.models.files.model_files import check_sequence_length
from keras_subembed.models.files.model_files import model_sequence_length

PRESET_MARKER = "keras_subembed.json"
# keras-hub saves a task's backbone by calling `backbone.save_to_preset` on
# the task's folder: inside one `save_preset` that call writes into our own
# staging folder and goes straight to keras-hub.
_SAVING = threading.local()
def _relative_paths(folder):
    """Every file, folder and link under `folder`, as POSIX paths relative to it
    (links are listed, never followed)."""
    folder = pathlib.Path(folder)
    found = []
    for parent, folders, names in os.walk(folder):
        for name in folders + names:
            found.append((pathlib.Path(parent) / name).relative_to(folder).as_posix())
    return found


def foreign_entries(path):
    """What under preset folder `path` this package did not write: every path not
    listed by its marker, nested ones included (all of them without a marker)."""
    path = pathlib.Path(path)
    marker = read_json_object(path / PRESET_MARKER)
    if marker.get("written_by") != WRITTEN_BY:
        return sorted(entry.name for entry in path.iterdir())
    # A marker written before nested paths were listed proves nothing below the top.
    ours = set(marker.get("entries", ())) | {PRESET_MARKER}
    return sorted(entry for entry in _relative_paths(path) if entry not in ours)


def is_preset_folder(path):
    """Whether `path` is a preset folder this package wrote, holding nothing else."""
    path = pathlib.Path(path)
    if not path.is_dir() or path.is_symlink():
        return False
    return not foreign_entries(path)


def mark_preset(folder):
    folder = pathlib.Path(folder)
    (folder / PRESET_MARKER).write_text(
        json.dumps({"written_by": WRITTEN_BY, "entries": sorted(_relative_paths(folder))}),
        encoding="utf-8")


def check_preset_target(path, overwrite):
    """`path` as a `Path` once a preset may be written there, else a clear error."""
    path = files.as_path(path)
    files.check_parent_folder(path)
    files.check_not_current_folder(path, "the preset")
    if not (path.exists() or path.is_symlink()) or _is_empty_folder(path):
        return path
    if path.is_symlink():
        raise FileExistsError(
            f"{str(path)!r} is a link; a preset replaces only a folder it wrote, never "
            "what a link points to. Give the folder itself or a new one.")
    if not path.is_dir():
        raise FileExistsError(
            f"{str(path)!r} exists and is not a folder; give a folder for the preset.")
    if not is_preset_folder(path):
        found = foreign_entries(path)
        raise FileExistsError(
            f"{str(path)!r} holds files this package did not write ({', '.join(found[:6])}"
            f"{', ...' if len(found) > 6 else ''}): a preset never replaces them, "
            "overwrite=True included. Choose a new folder (a preset saved before presets "
            f"carried the marker {PRESET_MARKER} is not replaced either: remove it yourself)."
        )
    if not overwrite:
        raise FileExistsError(
            f"{str(path)!r} holds a preset; pass overwrite=True to replace it.")
    return path


def _is_empty_folder(path):
    return path.is_dir() and not path.is_symlink() and not any(path.iterdir())


def save_preset(model, preset_dir, overwrite=False, sequence_length=None, max_shard_size=10):
    """Save a keras-hub task or backbone as a preset folder, losing no file.

    Args:
        model: a keras-hub `Task` (e.g. a `TextEmbedder`) or `Backbone`.
        preset_dir: the folder to write: new, empty, or (with `overwrite`) a
            preset this function wrote. Any other existing folder is refused.
        overwrite: replace a preset this package wrote there.
        sequence_length: the length the saved preprocessor pads to. Default:
            the model's own (what `match_model_files` read from the model's
            files, or the length the embedder was built or loaded with), not a
            shorter one set on the preprocessor for an evaluation; never more
            than the backbone's `max_sequence_length`.
        max_shard_size: as keras-hub's `save_to_preset`.

    Returns:
        The preset folder's `Path`.
    """
    if not isinstance(model, (keras_hub.models.Task, keras_hub.models.Backbone)):
        raise TypeError(
            "`model` must be a keras-hub Task (e.g. a TextEmbedder) or Backbone: only they "
            f"load back from a preset. Received: model={model!r:.80} (a {type(model).__name__})"
        )
    overwrite = check_bool("overwrite", overwrite)
    path = check_preset_target(preset_dir, overwrite)
    preprocessor = getattr(model, "preprocessor", None)
    limit = getattr(getattr(model, "backbone", None), "max_sequence_length", None)
    limit = limit if isinstance(limit, int) else None
    if sequence_length is not None:
        if preprocessor is None:
            raise ValueError(
                "`sequence_length` sets the preprocessor's length, and the model has no "
                f"preprocessor. Received: sequence_length={sequence_length!r}")
        sequence_length = check_sequence_length(sequence_length, limit)
    elif preprocessor is not None and isinstance(model_sequence_length(preprocessor), int):
        # The model's own length, unless the preprocessor was raised above it
        # (a shorter one is an evaluation's); a model compressed with a shorter
        # position table reads no more.
        current = getattr(preprocessor, "sequence_length", None)
        sequence_length = max(model_sequence_length(preprocessor),
                              current if isinstance(current, int) else 0)
        sequence_length = min(sequence_length, limit or float("inf"))
    base = _keras_hub_class(model)
    if _is_empty_folder(path):
        path.rmdir()  # holds nothing to lose; the preset moves into its place
    with files.staged_folder(path, overwrite, is_ours=is_preset_folder,
                             mark=mark_preset) as staging:
        with _sequence_length(preprocessor, sequence_length):
            _SAVING.active = True
            try:
                base.save_to_preset(model, str(staging), max_shard_size=max_shard_size)
            finally:
                _SAVING.active = False
    return path


def _keras_hub_class(model):
    """keras-hub's class whose `save_to_preset` writes `model`."""
    return keras_hub.models.Task if isinstance(model, keras_hub.models.Task) else (
        keras_hub.models.Backbone)


@contextlib.contextmanager
def _sequence_length(preprocessor, sequence_length):
    """The preprocessor at the length to save, restored after."""
    if preprocessor is None or not hasattr(preprocessor, "sequence_length"):
        yield
        return
    current = preprocessor.sequence_length
    preprocessor.sequence_length = current if sequence_length is None else sequence_length
    try:
        yield
    finally:
        preprocessor.sequence_length = current


def save_to_preset(self, preset_dir, max_shard_size=10, overwrite=False, sequence_length=None):
    """Save as a keras-hub preset folder, never over a user's files.

    An existing folder is refused unless it is a preset this package wrote
    and `overwrite=True`; the preprocessor keeps the model's own length
    unless `sequence_length` is given. See `keras_subembed.models.save_preset`.
    """
    if getattr(_SAVING, "active", False):
        return _keras_hub_class(self).save_to_preset(self, preset_dir, max_shard_size=max_shard_size)
    return save_preset(self, preset_dir, overwrite=overwrite,
                       sequence_length=sequence_length, max_shard_size=max_shard_size)
