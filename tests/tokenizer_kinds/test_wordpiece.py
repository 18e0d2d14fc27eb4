"""The WordPiece kind: its vocabulary file and fingerprint, the normalisation a runner
follows, and what MediaPipe's BERT tokenizer can and cannot carry."""

import hashlib

import keras_hub
import pytest

from keras_subembed.tokenizer_kinds import wordpiece

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "café", "##s", "a", "Paris"]


def tokenizer(lowercase=True, **kwargs):
    """An uncased BERT tokenizer (keras-hub's default keeps case)."""
    return keras_hub.models.BertTokenizer(vocabulary=VOCABULARY, lowercase=lowercase, **kwargs)


def test_the_runner_file_reads_back_to_the_fingerprint_the_model_records(tmp_path):
    data = wordpiece.runner_file(tokenizer())
    assert data == ("\n".join(VOCABULARY) + "\n").encode("utf-8")
    path = tmp_path / "m.vocab.txt"
    path.write_bytes(data)
    assert wordpiece.read_vocabulary(path) == VOCABULARY
    assert wordpiece.file_fingerprint(path) == wordpiece.fingerprint(tokenizer()) == (
        hashlib.sha256("\n".join(VOCABULARY).encode("utf-8")).hexdigest())
    path.write_bytes(b"\xff\xfe not UTF-8")
    assert wordpiece.read_vocabulary(path) is None and wordpiece.file_fingerprint(path) is None
    assert wordpiece.file_fingerprint(tmp_path / "missing.vocab.txt") is None


def test_the_runner_follows_the_tokenizers_case_and_accents():
    assert wordpiece.runner_settings(tokenizer()) == {"lowercase": True, "strip_accents": False}
    assert wordpiece.runner_settings(tokenizer(lowercase=False, strip_accents=True)) == {
        "lowercase": False, "strip_accents": True}
    # Verification text: ASCII lowercase whole words only.
    assert wordpiece.whole_words(tokenizer()) == ["the"]


def test_mediapipe_carries_an_uncased_vocabulary_with_its_special_tokens():
    name, data = wordpiece.mediapipe_file(tokenizer())
    assert (name, data) == ("vocab.txt", wordpiece.runner_file(tokenizer()))
    assert wordpiece.mediapipe_normalization(tokenizer()) is None
    assert "strips accents" in wordpiece.mediapipe_normalization(tokenizer(strip_accents=True))
    with pytest.raises(ValueError, match=r"keeps case \(lowercase=False\), but MediaPipe's BERT "
                                         r"tokenizer lowercases every input"):
        wordpiece.mediapipe_normalization(tokenizer(lowercase=False))
    without_pad = keras_hub.tokenizers.WordPieceTokenizer(vocabulary=["[UNK]", "[CLS]", "[SEP]", "a"])
    with pytest.raises(ValueError, match=r"needs the tokens \['\[PAD\]'\] in the vocabulary; "
                                         r"this tokenizer's vocabulary \(4 tokens\) lacks them"):
        wordpiece.mediapipe_file(without_pad)
