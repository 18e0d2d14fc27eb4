"""`TokenizerKind`: what the package must know of one kind of keras-hub tokenizer."""

import dataclasses

import keras_hub

# The fields that hold a function of the keras-hub tokenizer (or of a path).
_FUNCTIONS = ("runner_file", "fingerprint", "file_fingerprint", "runner_settings", "whole_words")
_MEDIAPIPE_FUNCTIONS = ("mediapipe_file", "mediapipe_normalization")


def no_settings(tokenizer):
    """A kind whose runner file alone decides the ids: nothing more to record."""
    return {}


@dataclasses.dataclass(frozen=True)
class TokenizerKind:
    """One kind of keras-hub tokenizer, as export, MediaPipe and `device/` handle it.

    `register_tokenizer_kind` makes one; every field is checked there. The
    functions take the keras-hub tokenizer, except `file_fingerprint`.
    Each field is documented below it.
    """

    name: str
    """The short name (`"wordpiece"`)."""
    tokenizer_class: type
    """The keras-hub tokenizer class recognised, with its subclasses (the nearest
    registered class wins)."""
    description: str
    """How messages name it (`"WordPiece"`)."""
    runner_suffix: str
    """The suffix of the runner file written beside an exported `.tflite` / `.onnx` file
    (`".vocab.txt"`)."""
    runner_file_description: str
    """How messages name that file (`"vocabulary"`)."""
    runner_file: object
    """`tokenizer -> bytes` of the runner file, or None while the tokenizer holds no
    vocabulary yet."""
    fingerprint_key: str
    """The model file's metadata key of its fingerprint (`"vocabulary_sha256"`): a
    runner refuses another tokenizer by it."""
    fingerprint: object
    """`tokenizer -> str`, the fingerprint recorded."""
    file_fingerprint: object
    """`path -> str`, the fingerprint of a runner file on disk (None when unreadable):
    how a later `overwrite` knows it."""
    runner_tokenizer: str
    """`"module.Class"` in the repository's `device/` that tokenizes text with the
    runner file, as an app does before it feeds ids to the `.tflite` or `.onnx` file
    (neither file holds a tokenizer; `device/run_tflite.py` registers it by its suffix)."""
    whole_words: object
    """`tokenizer -> list of str`, lowercase whole words of the vocabulary, to make
    verification text from."""
    runner_settings: object = no_settings
    """`tokenizer -> dict`, the normalisation the runner must follow, recorded beside
    the fingerprint (default: none)."""
    ids_by_frequency: bool = False
    """Whether the ids are numbered by probability, the most frequent pieces first
    (SentencePiece)."""
    mediapipe_writer: str = None
    """The class of MediaPipe's metadata writers that carries this tokenizer
    (`"BertTokenizer"`), or None: MediaPipe has no tokenizer of this kind, and
    `export(format="mediapipe")` refuses it."""
    mediapipe_file: object = None
    """`tokenizer -> (file name, bytes)` that writer reads, after checking MediaPipe can
    tokenize with it."""
    mediapipe_normalization: object = None
    """`tokenizer -> message or None`, what MediaPipe's own normalisation changes for
    this kind (warned of, or refused with `check_normalization="raise"`); raises
    `ValueError` itself where MediaPipe cannot give the model's ids."""

    def __post_init__(self):
        check_kind_name(self.name)
        if not (isinstance(self.tokenizer_class, type)
                and issubclass(self.tokenizer_class, keras_hub.tokenizers.Tokenizer)):
            raise TypeError(
                "`tokenizer_class` must be a keras-hub tokenizer class (a subclass of "
                f"keras_hub.tokenizers.Tokenizer). Received: tokenizer_class={self.tokenizer_class!r}")
        for field in ("description", "runner_file_description", "fingerprint_key"):
            _check_text(field, getattr(self, field))
        suffix = self.runner_suffix
        if not isinstance(suffix, str) or not suffix.startswith(".") or len(suffix) < 2 or (
                suffix in (".tflite", ".onnx", ".keras")):
            raise ValueError(
                "`runner_suffix` must be a file suffix starting with \".\" other than the "
                f"model files' (.tflite, .onnx, .keras). Received: runner_suffix={suffix!r}")
        module, _, cls = (self.runner_tokenizer or "").rpartition(".") if isinstance(
            self.runner_tokenizer, str) else ("", "", "")
        if not (module.isidentifier() and cls.isidentifier()):
            raise ValueError(
                "`runner_tokenizer` must name a class of `device/` as \"module.Class\" (e.g. "
                f"\"wordpiece_tokenizer.WordPieceTokenizer\"). Received: "
                f"runner_tokenizer={self.runner_tokenizer!r}")
        for field in _FUNCTIONS:
            _check_callable(field, getattr(self, field))
        if not isinstance(self.ids_by_frequency, bool):
            raise TypeError(f"`ids_by_frequency` must be a bool. "
                            f"Received: ids_by_frequency={self.ids_by_frequency!r}")
        if self.mediapipe_writer is None:
            given = [f for f in _MEDIAPIPE_FUNCTIONS if getattr(self, f) is not None]
            if given:
                raise ValueError(
                    f"{', '.join(f'`{f}`' for f in given)} need `mediapipe_writer` (the class "
                    "of MediaPipe's metadata writers that carries the tokenizer). Received: "
                    "mediapipe_writer=None")
            return
        _check_text("mediapipe_writer", self.mediapipe_writer)
        for field in _MEDIAPIPE_FUNCTIONS:
            _check_callable(field, getattr(self, field))

    @property
    def class_name(self):
        return self.tokenizer_class.__name__


def check_kind_name(name):
    """`name`, once it is a short name (a Python identifier)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(
            "`name` must be a short name (a Python identifier, e.g. \"wordpiece\"). "
            f"Received: name={name!r}")
    return name


def _check_text(field, value):
    if not isinstance(value, str) or not value:
        raise ValueError(f"`{field}` must be a non-empty string. Received: {field}={value!r}")


def _check_callable(field, value):
    if not callable(value):
        raise TypeError(f"`{field}` must be callable. Received: {field}={value!r}")
