"""`TokenizerFile`: the tokenizer `device/`'s runners read beside an exported model file."""

import pathlib

from keras_subembed import files
from keras_subembed.export.model_parts import runner_tokenizer_file
from keras_subembed.tokenizer_kinds.registry import is_exported_tokenizer_file


class TokenizerFile:
    """A model's tokenizer written beside its exported file, as `device/` reads it.

    `device/run_tflite.py` and `device/search_text.py` look for
    `<model file without its suffix>` and the tokenizer kind's `runner_suffix`
    (`keras_subembed.tokenizer_kinds`): `.vocab.txt` (a WordPiece vocabulary,
    one token a line), `.spm` (the serialized SentencePiece model of an
    XLM-R tokenizer, as `tokenizer.proto` holds it): `e5.int4_dynamic.tflite`
    gets `e5.int4_dynamic.spm`. The export records the file's fingerprint in
    the model file, so a runner refuses another tokenizer, and so a later
    `overwrite` knows the file as its own.

    The model file's guarantees hold for it: checked before any work
    (`check`); an existing file holding exactly these bytes is kept as it is;
    any other is replaced only with `overwrite` and only when the model file
    being replaced records its fingerprint (never a file the package did not
    write); the write is atomic (`write`) and `undo` takes it back when the
    model file then fails to be written, so a failed export leaves nothing.

    Args:
        model_path: the exported model file (`.tflite`, `.onnx`) it goes beside.
        kind: the model's `TokenizerKind` (its suffix, what the file is).
        data: the file's bytes.

    Example:
    ```python
    tokenizer = TokenizerFile.of(embedder, "e5.int4_dynamic.tflite")
    tokenizer.path
    # PosixPath('e5.int4_dynamic.spm')
    tokenizer.check(overwrite=False, model_metadata=None)
    tokenizer.write(overwrite=False)
    ```
    """

    def __init__(self, model_path, kind, data):
        self.model_path = pathlib.Path(model_path)
        self.path = self.model_path.with_suffix(kind.runner_suffix)
        self.data = data
        self.what = kind.runner_file_description
        self.old = None  # the bytes at `path` when checked
        self.written = False

    @classmethod
    def of(cls, model, model_path):
        """The tokenizer file of `model`'s preprocessor beside `model_path`, or None without one."""
        found = runner_tokenizer_file(model)
        return None if found is None else cls(model_path, *found)

    def check(self, overwrite, model_metadata, keep=(), flag=files.OVERWRITE):
        """Raise unless the file may be written; before any work.

        Args:
            overwrite: whether a file of other bytes may be replaced.
            model_metadata: the `keras_subembed` metadata of the model file
                now at the export's target (None when there is none): a file
                whose fingerprint it records is one an export wrote.
            keep, flag: as for `files.check_file_target`.
        """
        files.check_not_kept(self.path, keep)
        if self.path.is_file() and not self.path.is_symlink() and self.path.read_bytes() == self.data:
            self.old = self.data  # nothing to write, nothing replaced
            return
        files.check_file_target(
            self.path, overwrite, lambda path: is_exported_tokenizer_file(path, model_metadata),
            f"the {self.what} of the {self.model_path.suffix or 'model'} file an export wrote there",
            keep, flag)
        self.old = self.path.read_bytes() if self.path.is_file() else None

    def write(self, overwrite):
        """Write the file atomically; a file that changed since `check` is kept and raises."""
        if self.old == self.data:
            return
        # Re-checked at the replace: only the bytes `check` judged ours go.
        files.write_file(self.path, self.data, overwrite,
                         lambda path: self.old is not None and path.read_bytes() == self.old)
        self.written = True

    def undo(self):
        """Take back `write`: remove the file it created, or put back the one it replaced."""
        if not self.written:
            return
        self.written = False
        if not self.path.is_file() or self.path.read_bytes() != self.data:
            return  # changed by someone else since: theirs now
        if self.old is None:
            self.path.unlink()
        else:
            files.write_file(self.path, self.old, True, lambda path: path.read_bytes() == self.data)
