"""A throw-away tokenizer kind: whitespace words, its runner file a word list.

What a newcomer writes for a new kind of tokenizer: the tokenizer's functions and the
fields of one `register_tokenizer_kind` call (`WORDS_KIND`)."""

import hashlib
import pathlib

import keras_hub

from keras_subembed.tokenizer_kinds.wordpiece import vocabulary_text


class WhitespaceTokenizer(keras_hub.tokenizers.Tokenizer):
    """Words split at whitespace, each its vocabulary id (`[UNK]` otherwise)."""

    def __init__(self, vocabulary, **kwargs):
        super().__init__(**kwargs)
        self.vocabulary = list(vocabulary)

    def vocabulary_size(self):
        return len(self.vocabulary)

    def tokenize(self, text):
        ids = {word: i for i, word in enumerate(self.vocabulary)}
        return [ids.get(word, 1) for word in text.split()]


def words_file(tokenizer):
    return vocabulary_text(tokenizer.vocabulary).encode("utf-8")


def words_fingerprint(tokenizer):
    return hashlib.sha256(words_file(tokenizer)).hexdigest()


def words_file_fingerprint(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


WORDS_KIND = dict(
    description="whitespace words", runner_suffix=".words.txt",
    runner_file_description="word list", runner_file=words_file,
    fingerprint_key="words_sha256", fingerprint=words_fingerprint,
    file_fingerprint=words_file_fingerprint,
    runner_tokenizer="whitespace_tokenizer.WhitespaceTokenizer",
    whole_words=lambda tokenizer: tokenizer.vocabulary[4:])
