"""Tokenizer kinds: what export, MediaPipe and `device/` need of each kind of keras-hub tokenizer."""

from keras_subembed.tokenizer_kinds.registry import TOKENIZER_KINDS
from keras_subembed.tokenizer_kinds.registry import find_tokenizer_kind
from keras_subembed.tokenizer_kinds.registry import register_tokenizer_kind
from keras_subembed.tokenizer_kinds.registry import tokenizer_kind_of
from keras_subembed.tokenizer_kinds.tokenizer_kind import TokenizerKind

__all__ = [
    "TOKENIZER_KINDS",
    "TokenizerKind",
    "find_tokenizer_kind",
    "register_tokenizer_kind",
    "tokenizer_kind_of",
]
