"""Writing files without ever losing one: exports, presets, vocabularies.

Every output is written under a hidden staging name beside its target and
moved into place at the end, so a failed export leaves nothing behind; a
staging entry left by a killed export is removed by the next export to the
same target. Nothing is replaced unless `overwrite`, and `overwrite` only
replaces what an export wrote, proven by content the export controls, never
a file merely of the right kind: a `.tflite` file carries the metadata entry
`keras_subembed`, a SavedModel folder the marker `assets.extra/keras_subembed.json`,
a JSON report the key `written_by`, and a tokenizer file (a vocabulary,
a SentencePiece model) is one whose fingerprint the model file beside it
records (`tokenizer_kinds`: each kind says how its file is fingerprinted).
"""

import contextlib
import json
import os
import pathlib
import re
import secrets
import shutil
import tempfile

from keras_subembed.checks import check_bool
from keras_subembed.tflite_metadata import WRITTEN_BY
from keras_subembed.tflite_metadata import read_metadata
# A tokenizer file is ours by the fingerprint its kind records; the files'
# helpers of each kind keep their names here.
from keras_subembed.tokenizer_kinds.registry import is_exported_tokenizer_file  # noqa: F401
from keras_subembed.tokenizer_kinds.sentencepiece import sentencepiece_fingerprint  # noqa: F401
from keras_subembed.tokenizer_kinds.wordpiece import read_vocabulary  # noqa: F401
from keras_subembed.tokenizer_kinds.wordpiece import vocabulary_fingerprint  # noqa: F401
from keras_subembed.tokenizer_kinds.wordpiece import vocabulary_text  # noqa: F401

# What `tf.saved_model.save` writes into a SavedModel folder.
SAVED_MODEL_ENTRIES = {"saved_model.pb", "variables", "assets", "assets.extra", "fingerprint.pb"}
SAVED_MODEL_MARKER = pathlib.Path("assets.extra", "keras_subembed.json")


def is_tflite_file(path):
    """Whether `path` is a `.tflite` file an export wrote (its metadata says so)."""
    data = pathlib.Path(path).read_bytes()
    return data[4:8] == b"TFL3" and read_metadata(data) is not None


def is_saved_model(path):
    """Whether `path` is a SavedModel folder an export wrote (it holds our marker)."""
    path = pathlib.Path(path)
    if not path.is_dir() or path.is_symlink():
        return False
    entries = {entry.name for entry in path.iterdir()}
    return (entries <= SAVED_MODEL_ENTRIES and "saved_model.pb" in entries
            and read_json_object(path / SAVED_MODEL_MARKER).get("written_by") == WRITTEN_BY)


def mark_saved_model(folder):
    """Write the marker that lets a later `overwrite` replace this SavedModel."""
    marker = pathlib.Path(folder, SAVED_MODEL_MARKER)
    marker.parent.mkdir(exist_ok=True)
    marker.write_text(json.dumps({"written_by": WRITTEN_BY}), encoding="utf-8")


def is_json_report(path):
    """Whether `path` is a JSON report an export wrote (`written_by` says so)."""
    return read_json_object(path).get("written_by") == WRITTEN_BY


def read_json_object(path):
    try:
        values = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return values if isinstance(values, dict) else {}


def tflite_metadata_of(tflite_path):
    """The `keras_subembed` metadata of the `.tflite` file at `tflite_path`, or None."""
    try:
        return read_metadata(pathlib.Path(tflite_path).read_bytes())
    except OSError:
        return None


# How a refusal names the overwrite switch: the argument; `--overwrite` on
# the command line.
OVERWRITE = "overwrite=True"


def check_file_target(path, overwrite, is_ours, what, keep=(), flag=OVERWRITE):
    """`path` as a `Path` once it may receive a new file, else a clear error.

    Args:
        path: the file to write.
        overwrite: whether an existing file may be replaced.
        is_ours: `is_ours(path)` tells whether an existing file is one an
            export wrote (the only kind `overwrite` replaces).
        what: what the file is, for messages (e.g. "a .tflite file").
        keep: paths that must never be written (the input model).
        flag: how messages name the overwrite switch.
    """
    overwrite = check_bool("overwrite", overwrite)
    path = as_path(path)
    check_parent_folder(path)
    check_not_kept(path, keep)
    if path.is_dir():
        raise IsADirectoryError(
            f"{str(path)!r} is a folder; give the path of {what} to write."
        )
    if path.exists() or path.is_symlink():
        if not overwrite:
            raise FileExistsError(f"{str(path)!r} exists; pass {flag} to replace it.")
        if not path.is_file() or not is_ours(path):
            raise FileExistsError(
                f"{str(path)!r} exists and is not {what}; {flag} only replaces "
                "what an export wrote. Choose another path or remove it yourself."
            )
    return path


def check_folder_target(path, overwrite, keep=(), flag=OVERWRITE):
    """`path` as a `Path` once a SavedModel folder may be written there."""
    overwrite = check_bool("overwrite", overwrite)
    path = as_path(path)
    check_parent_folder(path)
    check_not_kept(path, keep)
    check_not_current_folder(path, "the SavedModel")
    if path.exists() or path.is_symlink():
        if not overwrite:
            raise FileExistsError(f"{str(path)!r} exists; pass {flag} to replace it.")
        if path.is_symlink() or not is_saved_model(path):
            raise FileExistsError(
                f"{str(path)!r} exists and is not a SavedModel folder; {flag} only "
                "replaces a SavedModel. Choose another path or remove it yourself."
            )
    return path


def check_not_current_folder(path, what):
    """Refuse the current folder or a parent: a folder output replaces its target whole."""
    resolved, cwd = path.resolve(), pathlib.Path.cwd().resolve()
    if resolved == cwd or resolved in cwd.parents:
        raise ValueError(
            f"{str(path)!r} is the current folder or one of its parents; "
            f"give a new folder name for {what}."
        )


def as_path(path):
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise TypeError(f"`path` must be a file path (str or os.PathLike). Received: path={path!r}")
    return pathlib.Path(path)


def check_parent_folder(path):
    parent = path.parent
    if not parent.exists():
        raise FileNotFoundError(f"The folder of {str(path)!r} does not exist.")
    if not parent.is_dir():
        raise NotADirectoryError(
            f"Cannot write {str(path)!r}: {str(parent)!r} is a file, not a folder."
        )


def check_not_kept(path, keep):
    """Refuse a target that is, or (for a folder) contains, an input."""
    resolved = path.resolve()
    for kept in keep:
        kept = pathlib.Path(kept).resolve()
        if resolved == kept or resolved in kept.parents:
            raise ValueError(
                f"{str(path)!r} would replace the input {str(kept)!r}; "
                "choose an output path that is not the input or a folder holding it."
            )


def check_distinct(paths):
    """Raise when two outputs of one export are the same path, or one lies
    inside another (a file written into the SavedModel folder)."""
    seen = {}
    for path in paths:
        resolved = pathlib.Path(path).resolve()
        if resolved in seen:
            raise ValueError(f"Two outputs go to the same path: {str(seen[resolved])!r}.")
        seen[resolved] = path
    for resolved, path in seen.items():
        for other, other_path in seen.items():
            if other in resolved.parents:
                raise ValueError(
                    f"The output {str(path)!r} lies inside the output folder "
                    f"{str(other_path)!r}; give outputs that do not hold one another."
                )


def staging_name(path):
    """A hidden name beside `path`, recording the writing process's id."""
    path = pathlib.Path(path)
    return path.with_name(f".{path.name}.partial-{os.getpid()}-{secrets.token_hex(4)}")


def remove_stale_staging(path):
    """Remove staging entries for `path` left by export processes that died."""
    path = pathlib.Path(path)
    pattern = re.compile(rf"\.{re.escape(path.name)}\.partial-(\d+)-[0-9a-f]{{8}}")
    if not path.parent.is_dir():
        return
    for entry in path.parent.iterdir():
        match = pattern.fullmatch(entry.name)
        if match and not process_is_alive(int(match.group(1))):
            remove(entry)


def process_is_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by another user
        return True
    return True


def remove(path):
    path = pathlib.Path(path)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


@contextlib.contextmanager
def scratch_folder(path=None):
    """A private folder at `path` (a staging name, which the next export to
    the same target removes if this one is killed), removed after; a
    temporary one when `path` is None."""
    if path is None:
        with tempfile.TemporaryDirectory() as tmp:
            yield tmp
        return
    os.mkdir(path, 0o700)
    try:
        yield str(path)
    finally:
        remove(path)


def write_file(path, data, overwrite, is_ours=None):
    """Write `data` to `path` atomically, with the permissions of a new file.

    The target is checked again at the last step, as it may have changed
    during the export: without `overwrite` the staged file is linked into
    place, which fails if a file appeared at `path`; with it, an existing
    file is replaced only if `is_ours(path)` (required then) still holds. A
    file that appeared is kept and `FileExistsError` raised.
    """
    if check_bool("overwrite", overwrite) and is_ours is None:
        raise TypeError("`write_file(..., overwrite=True)` needs `is_ours` to re-check the target.")
    path = pathlib.Path(path)
    remove_stale_staging(path)
    staging = staging_name(path)
    # os.open with 0o666 gives the mode the umask gives any new file (mkstemp: 0600).
    handle = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        if not overwrite:
            link_into_place(staging, path)
        elif (path.exists() or path.is_symlink()) and (
                path.is_symlink() or not path.is_file() or not is_ours(path)):
            raise FileExistsError(
                f"{str(path)!r} was replaced while exporting by a file an export did not "
                "write; it was kept and nothing was written."
            )
        else:
            os.replace(staging, path)
    finally:
        staging.unlink(missing_ok=True)
    return path


def link_into_place(staging, path):
    try:
        os.link(staging, path)
    except FileExistsError:
        raise FileExistsError(
            f"{str(path)!r} appeared while exporting; it was kept and nothing was "
            "written. Pass overwrite=True to replace it."
        ) from None


@contextlib.contextmanager
def staged_folder(path, overwrite, is_ours=is_saved_model, mark=mark_saved_model):
    """Yield a staging folder; on success it is marked (`mark(folder)`) and becomes
    `path`, replacing an existing folder only when `overwrite` and `is_ours(path)`
    (a SavedModel by default, a preset for `save_preset`)."""
    path = pathlib.Path(path)
    remove_stale_staging(path)
    staging = staging_name(path)
    os.mkdir(staging, 0o777)
    try:
        yield staging
        mark(staging)
        if path.exists() or path.is_symlink():
            if not overwrite or not is_ours(path):
                raise FileExistsError(
                    f"{str(path)!r} appeared while exporting; it was kept and nothing "
                    "was written."
                )
            # The old folder moves aside before the new one moves in: a crash in
            # between leaves it as stale staging, never a half-written folder.
            old = staging_name(path)
            os.rename(path, old)
            os.rename(staging, path)
            remove(old)
        else:
            os.rename(staging, path)
    finally:
        remove(staging)
