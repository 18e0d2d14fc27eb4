"""`TokenizerKind`: an entry checked field by field where it is made, registered or not.
(Registration's own refusals: tests/tokenizer_kinds/test_tokenizer_kinds_registry.py.)"""

import dataclasses

import pytest

from keras_subembed.tokenizer_kinds import TOKENIZER_KINDS
from keras_subembed.tokenizer_kinds.tokenizer_kind import TokenizerKind
from keras_subembed.tokenizer_kinds.tokenizer_kind import check_kind_name
from tests.tokenizer_kinds.words_kind import WORDS_KIND
from tests.tokenizer_kinds.words_kind import WhitespaceTokenizer


def words_kind(**changes):
    return TokenizerKind(**{"name": "words", "tokenizer_class": WhitespaceTokenizer,
                            **WORDS_KIND, **changes})


def test_a_kind_made_directly_is_not_registered_and_has_the_defaults():
    kind = words_kind()
    assert "words" not in TOKENIZER_KINDS
    assert kind.class_name == "WhitespaceTokenizer"
    assert kind.runner_settings(WhitespaceTokenizer(["a"])) == {}  # the runner file decides
    assert kind.ids_by_frequency is False and kind.mediapipe_writer is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        kind.runner_suffix = ".txt"
    assert words_kind() == kind  # equal fields: equal kinds (re-registering is allowed)


@pytest.mark.parametrize("field, value, error, message", [
    ("description", "", ValueError, r"`description` must be a non-empty string\. Received: description=''"),
    ("fingerprint_key", None, ValueError, r"`fingerprint_key` must be a non-empty string\. "
                                          r"Received: fingerprint_key=None"),
    ("runner_suffix", ".", ValueError, r"`runner_suffix` must be a file suffix .*Received: runner_suffix='\.'"),
    ("runner_suffix", ".keras", ValueError, r"Received: runner_suffix='\.keras'"),
    ("runner_tokenizer", "device.words.", ValueError, r"Received: runner_tokenizer='device\.words\.'"),
    ("whole_words", ["w1"], TypeError, r"`whole_words` must be callable\. Received: whole_words=\['w1'\]"),
    ("mediapipe_writer", "", ValueError, r"`mediapipe_writer` must be a non-empty string"),
])
def test_each_field_is_checked_where_the_kind_is_made(field, value, error, message):
    with pytest.raises(error, match=message):
        words_kind(**{field: value})


def test_a_kind_name_is_a_python_identifier():
    assert check_kind_name("word_list") == "word_list"
    for name in ("", "word-list", "2words", None):
        with pytest.raises(ValueError, match=rf"`name` must be a short name .*Received: name={name!r}"):
            check_kind_name(name)
