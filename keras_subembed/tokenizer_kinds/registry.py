"""The registry of tokenizer kinds: the one place a new kind of keras-hub tokenizer is added.

Export, MediaPipe, the recipe and the distiller look a tokenizer's kind up
here (`tokenizer_kind_of`) and use what the entry states, as keras-hub's
preset loader picks one `convert_<family>` module for a model: the runner
file and its suffix, the fingerprint a runner checks, MediaPipe's writer
(or that MediaPipe has none), the normalisation MediaPipe changes, and the
class of `device/` that tokenizes with the runner file for a `.tflite` or
`.onnx` file (both take ids). Each kind's functions are one module
(`wordpiece`, `sentencepiece`); a new kind is a module and a
`register_tokenizer_kind` call (and, for `device/`, a
`register_runner_tokenizer` call in `device/run_tflite.py`).

Example:
>>> kind = TOKENIZER_KINDS["wordpiece"]
>>> kind.runner_suffix, kind.fingerprint_key, kind.mediapipe_writer
('.vocab.txt', 'vocabulary_sha256', 'BertTokenizer')
>>> tokenizer = keras_hub.models.BertTokenizer(
...     vocabulary=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the"])
>>> tokenizer_kind_of(tokenizer).name
'wordpiece'
"""

import dataclasses
import types

import keras_hub

from keras_subembed.tokenizer_kinds import sentencepiece
from keras_subembed.tokenizer_kinds import wordpiece
from keras_subembed.tokenizer_kinds.tokenizer_kind import TokenizerKind
from keras_subembed.tokenizer_kinds.tokenizer_kind import check_kind_name

_TOKENIZER_KINDS = {}
# Read-only; `register_tokenizer_kind` adds to it.
TOKENIZER_KINDS = types.MappingProxyType(_TOKENIZER_KINDS)


def register_tokenizer_kind(name, tokenizer_class, **fields):
    """Add (or re-register identically) the tokenizer kind `name`.

    Args:
        name: str, the short name (a Python identifier).
        tokenizer_class: the keras-hub tokenizer class it recognises
            (subclasses too, unless a subclass is registered itself).
        **fields: the rest of the entry, checked by name: see
            `TokenizerKind` (`description`, `runner_suffix`,
            `runner_file_description`, `runner_file`,
            `fingerprint_key`, `fingerprint`, `file_fingerprint`,
            `runner_tokenizer`, `whole_words`, and optionally
            `runner_settings`, `ids_by_frequency`, `mediapipe_writer`,
            `mediapipe_file`, `mediapipe_normalization`).

    Returns:
        The registered `TokenizerKind`.

    Example (a whitespace tokenizer kind; its functions are written in
    tests/tokenizer_kinds/test_tokenizer_kinds_registry.py):

        register_tokenizer_kind(
            "words", WhitespaceTokenizer, description="whitespace words",
            runner_suffix=".words.txt", runner_file_description="word list",
            runner_file=words_file, fingerprint_key="words_sha256",
            fingerprint=words_fingerprint, file_fingerprint=words_file_fingerprint,
            runner_tokenizer="whitespace_tokenizer.WhitespaceTokenizer", whole_words=words)
    """
    check_kind_name(name)
    unknown = sorted(set(fields) - {f.name for f in _fields()})
    missing = [f.name for f in _fields()
               if f.default is dataclasses.MISSING and f.name not in fields]
    if unknown or missing:
        raise TypeError(
            f"Tokenizer kind {name!r}: "
            + (f"no field {', '.join(map(repr, unknown))}; " if unknown else "")
            + (f"missing {', '.join(map(repr, missing))}; " if missing else "")
            + f"a tokenizer kind has {', '.join(f.name for f in _fields())}.")
    kind = TokenizerKind(name=name, tokenizer_class=tokenizer_class, **fields)
    existing = _TOKENIZER_KINDS.get(name)
    if existing is not None and existing != kind:
        raise ValueError(f"Tokenizer kind {name!r} is already registered (for "
                         f"{existing.class_name}); choose another name.")
    for other in _TOKENIZER_KINDS.values():
        if other.name == name:
            continue
        for field in ("tokenizer_class", "runner_suffix", "fingerprint_key"):
            if getattr(other, field) == getattr(kind, field):
                raise ValueError(
                    f"Tokenizer kind {other.name!r} has `{field}`={getattr(kind, field)!r} "
                    f"already; kind {name!r} needs its own.")
    _TOKENIZER_KINDS[name] = kind
    return kind


def _fields():
    return [f for f in TokenizerKind.__dataclass_fields__.values()
            if f.name not in ("name", "tokenizer_class")]


def find_tokenizer_kind(tokenizer):
    """The kind of `tokenizer` (its nearest registered class), or None."""
    by_class = {kind.tokenizer_class: kind for kind in _TOKENIZER_KINDS.values()}
    return next((by_class[cls] for cls in type(tokenizer).__mro__ if cls in by_class), None)


def tokenizer_kind_of(tokenizer):
    """The kind of `tokenizer`; a `ValueError` names its class and the registered kinds."""
    kind = find_tokenizer_kind(tokenizer)
    if kind is None:
        raise ValueError(
            f"No tokenizer kind is registered for {type(tokenizer).__name__}. Registered "
            f"kinds: {registered_kinds()}. Register one with "
            "`keras_subembed.tokenizer_kinds.register_tokenizer_kind`.")
    return kind


def registered_kinds():
    """`"name (Class)"` of every registered kind, for messages."""
    return ", ".join(f"{kind.name} ({kind.class_name})" for kind in _TOKENIZER_KINDS.values())


def mediapipe_kinds():
    """The kinds MediaPipe has a tokenizer for."""
    return [kind for kind in _TOKENIZER_KINDS.values() if kind.mediapipe_writer]


def is_exported_tokenizer_file(path, metadata):
    """Whether `path` holds the runner file whose fingerprint `metadata` (a model
    file's `keras_subembed` entry, or None) records."""
    for kind in _TOKENIZER_KINDS.values():
        if metadata and metadata.get(kind.fingerprint_key):
            return kind.file_fingerprint(path) == metadata[kind.fingerprint_key]
    return False


register_tokenizer_kind(
    "wordpiece", keras_hub.tokenizers.WordPieceTokenizer, description="WordPiece",
    runner_suffix=".vocab.txt", runner_file_description="vocabulary",
    runner_file=wordpiece.runner_file,
    fingerprint_key="vocabulary_sha256", fingerprint=wordpiece.fingerprint,
    file_fingerprint=wordpiece.file_fingerprint,
    runner_tokenizer="wordpiece_tokenizer.WordPieceTokenizer",
    whole_words=wordpiece.whole_words, runner_settings=wordpiece.runner_settings,
    mediapipe_writer="BertTokenizer", mediapipe_file=wordpiece.mediapipe_file,
    mediapipe_normalization=wordpiece.mediapipe_normalization)
register_tokenizer_kind(
    "sentencepiece", keras_hub.tokenizers.XLMRobertaTokenizer,
    description="an XLM-R SentencePiece model", runner_suffix=".spm",
    runner_file_description="SentencePiece model",
    runner_file=sentencepiece.runner_file, fingerprint_key="sentencepiece_sha256",
    fingerprint=sentencepiece.fingerprint, file_fingerprint=sentencepiece.file_fingerprint,
    runner_tokenizer="sentencepiece_tokenizer.SentencePieceTokenizer",
    whole_words=sentencepiece.whole_words, ids_by_frequency=True,
    mediapipe_writer="SentencePieceTokenizer", mediapipe_file=sentencepiece.mediapipe_file,
    mediapipe_normalization=sentencepiece.mediapipe_normalization)
