"""The tokenizer kinds registry: recognition, refusals, and a kind added from outside.

The throw-away kind of tests/tokenizer_kinds/words_kind.py is what a newcomer
writes for a new tokenizer: its functions and one `register_tokenizer_kind` call
(and, for `device/`, one `register_runner_tokenizer` call). It goes through export
with its runner file and through the device runner, with no other change to the
package.
"""

import pathlib
import sys

import keras_hub
import numpy as np
import pytest

from keras_subembed.export import export
from keras_subembed.tokenizer_kinds import TOKENIZER_KINDS
from keras_subembed.tokenizer_kinds import find_tokenizer_kind
from keras_subembed.tokenizer_kinds import register_tokenizer_kind
from keras_subembed.tokenizer_kinds import registry
from keras_subembed.tokenizer_kinds import tokenizer_kind_of
from tests.export.conftest import sentence_encoder
from tests.sentencepiece_utils import xlm_roberta_tokenizer
from tests.tokenizer_kinds.words_kind import WORDS_KIND
from tests.tokenizer_kinds.words_kind import WhitespaceTokenizer
from tests.tokenizer_kinds.words_kind import words_file
from tests.tokenizer_kinds.words_kind import words_file_fingerprint
from tests.tokenizer_kinds.words_kind import words_fingerprint

DEVICE = pathlib.Path(__file__).parents[2] / "device"
# The sentence encoder of tests/export/conftest.py takes 100 ids.
WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"] + [f"w{i}" for i in range(96)]
BERT_WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "city"]


class DeviceWords:
    """The app's side of the kind: text -> ids with the runner file, no framework."""

    pad_id, cls_id, sep_id = 0, 2, 3

    def __init__(self, words):
        self.ids = {word: i for i, word in enumerate(words)}

    def tokenize(self, text):
        return [self.ids.get(word, 1) for word in text.split()]

    def pack(self, ids, sequence_length):
        return [self.cls_id] + list(ids[: sequence_length - 2]) + [self.sep_id]


@pytest.fixture
def words_kind():
    """The throw-away kind, registered for one test and then taken back."""
    kind = register_tokenizer_kind("words", WhitespaceTokenizer, **WORDS_KIND)
    yield kind
    del registry._TOKENIZER_KINDS["words"]


@pytest.fixture
def device_runner():
    """`device/`'s runners, with the kind's runner tokenizer registered."""
    sys.path.insert(0, str(DEVICE))
    import run_tflite
    import search_text

    def load(path, metadata, **kwargs):
        if words_file_fingerprint(path) != metadata.get("words_sha256"):
            raise run_tflite.RunnerError(f"{path} is not the word list the model was exported with")
        return DeviceWords(path.read_text(encoding="utf-8").splitlines())

    kind = run_tflite.register_runner_tokenizer(
        (".words.txt",), "words_sha256", "word list", "a whitespace tokenizer", load)
    yield run_tflite, search_text
    run_tflite.RUNNER_TOKENIZERS.remove(kind)
    sys.path.remove(str(DEVICE))


def embedder_with(tokenizer):
    model, _ = sentence_encoder()
    model.preprocessor = type("Preprocessor", (), {"tokenizer": tokenizer})()
    return model


def keras_vectors(model, tokenizer, texts, sequence_length):
    rows = [[2] + tokenizer.tokenize(text)[: sequence_length - 2] + [3] for text in texts]
    width = max(map(len, rows))
    token_ids = np.array([row + [0] * (width - len(row)) for row in rows], "int32")
    outputs = model({"token_ids": token_ids, "padding_mask": (token_ids > 0).astype("int32")})
    return np.asarray(outputs["embedding"])


def test_keras_hub_tokenizers_are_recognised_by_their_nearest_registered_class():
    assert tokenizer_kind_of(keras_hub.models.BertTokenizer(vocabulary=BERT_WORDS)).name == "wordpiece"
    assert tokenizer_kind_of(keras_hub.tokenizers.WordPieceTokenizer(vocabulary=BERT_WORDS)).name == (
        "wordpiece")
    assert tokenizer_kind_of(xlm_roberta_tokenizer()).name == "sentencepiece"
    assert find_tokenizer_kind(None) is None
    assert [kind.runner_suffix for kind in TOKENIZER_KINDS.values()] == [".vocab.txt", ".spm"]


def test_an_unknown_tokenizer_is_refused_naming_its_class_and_the_registered_kinds():
    with pytest.raises(ValueError, match=r"No tokenizer kind is registered for ByteTokenizer\. "
                       r"Registered kinds: wordpiece \(WordPieceTokenizer\), "
                       r"sentencepiece \(XLMRobertaTokenizer\)\."):
        tokenizer_kind_of(keras_hub.tokenizers.ByteTokenizer())


@pytest.mark.parametrize("name, fields, error, match", [
    ("two words", {}, ValueError, r"`name` must be a short name .*Received: name='two words'"),
    (3, {}, ValueError, r"Received: name=3"),
    ("words", {"tokenizer_class": int}, TypeError, r"Received: tokenizer_class=<class 'int'>"),
    ("words", {"runner_suffix": "txt"}, ValueError, r"Received: runner_suffix='txt'"),
    ("words", {"runner_suffix": ".tflite"}, ValueError, r"Received: runner_suffix='.tflite'"),
    ("words", {"runner_file": "words.txt"}, TypeError, r"Received: runner_file='words.txt'"),
    ("words", {"runner_tokenizer": "WhitespaceTokenizer"}, ValueError,
     r"Received: runner_tokenizer='WhitespaceTokenizer'"),
    ("words", {"ids_by_frequency": 1}, TypeError, r"Received: ids_by_frequency=1"),
    ("words", {"mediapipe_file": words_file}, ValueError,
     r"`mediapipe_file` need `mediapipe_writer`"),
    ("words", {"mediapipe_writer": "BertTokenizer"}, TypeError,
     r"`mediapipe_file` must be callable\. Received: mediapipe_file=None"),
    ("words", {"runner_suffix": ".vocab.txt"}, ValueError,
     r"'wordpiece' has `runner_suffix`='.vocab.txt' already"),
    ("words", {"fingerprint_key": "vocabulary_sha256"}, ValueError,
     r"'wordpiece' has `fingerprint_key`='vocabulary_sha256' already"),
    ("words", {"vocabulary": WORDS}, TypeError, r"Tokenizer kind 'words': no field 'vocabulary'"),
    ("wordpiece", {}, ValueError, r"'wordpiece' is already registered \(for WordPieceTokenizer\)"),
])
def test_registration_names_the_bad_argument(name, fields, error, match):
    arguments = {"tokenizer_class": WhitespaceTokenizer, **WORDS_KIND, **fields}
    with pytest.raises(error, match=match):
        register_tokenizer_kind(name, **arguments)
    assert list(TOKENIZER_KINDS) == ["wordpiece", "sentencepiece"]


def test_registration_names_missing_fields():
    with pytest.raises(TypeError, match=r"Tokenizer kind 'words': missing 'runner_suffix', "):
        register_tokenizer_kind("words", WhitespaceTokenizer, description="whitespace words")


@pytest.mark.tensorflow_only(reason="a live model with a tokenizer the .keras format cannot save")
def test_a_throw_away_kind_goes_through_tflite_export_and_the_device_runner(
        words_kind, device_runner, tmp_path):
    run_tflite, search_text = device_runner
    tokenizer = WhitespaceTokenizer(WORDS)
    model = embedder_with(tokenizer)
    path = tmp_path / "words.tflite"
    report = export(model, path, format="tflite")
    runner_file = tmp_path / "words.words.txt"
    assert report.tokenizer_path == str(runner_file)
    assert runner_file.read_bytes() == words_file(tokenizer)
    assert run_tflite.read_export_metadata(path)["words_sha256"] == words_fingerprint(tokenizer)
    # The fingerprint proves the file is the export's: `overwrite` replaces both.
    export(model, path, format="tflite", overwrite=True)

    texts = ["w1 w2 w3", "w40 nothing w95 w7 w7", "w9"]
    encoder = search_text.SentenceEncoder(path, sequence_length=16)
    assert isinstance(encoder.tokenizer, DeviceWords)
    np.testing.assert_allclose(encoder.embed(texts), keras_vectors(model, tokenizer, texts, 16),
                               atol=1e-5)

    runner_file.write_text("w0\nw1\n", encoding="utf-8")
    with pytest.raises(run_tflite.RunnerError, match="is not the word list the model was exported"):
        run_tflite.load_tokenizer(path)
    # A WordPiece vocabulary given instead: the model records another kind's file.
    vocabulary = tmp_path / "other.vocab.txt"
    vocabulary.write_text("".join(f"{word}\n" for word in WORDS), encoding="utf-8")
    with pytest.raises(run_tflite.RunnerError, match="the model was exported with a whitespace "
                       "tokenizer, not the vocabulary .*: pass its .words.txt file"):
        run_tflite.load_tokenizer(path, vocabulary)


@pytest.mark.tensorflow_only(reason="a live model with a tokenizer the .keras format cannot save")
def test_a_throw_away_kind_goes_through_onnx_export_with_its_runner_file(
        words_kind, device_runner, tmp_path):
    pytest.importorskip("onnxruntime")
    from keras_subembed.export.onnx.onnx_format import inference_session
    from keras_subembed.export.onnx.onnx_format import read_onnx_metadata

    tokenizer = WhitespaceTokenizer(WORDS)
    model = embedder_with(tokenizer)
    path = tmp_path / "words.onnx"
    report = export(model, path, format="onnx")
    runner_file = pathlib.Path(report.tokenizer_path)
    assert runner_file == tmp_path / "words.words.txt"
    data = path.read_bytes()
    assert read_onnx_metadata(data)["words_sha256"] == words_file_fingerprint(runner_file)
    # The ONNX file takes ids: the app's tokenizer reads the runner file.
    device = DeviceWords(runner_file.read_text(encoding="utf-8").splitlines())
    texts = ["w5 w6", "w80 w81 unknown w82"]
    for text in texts:
        ids = np.array([device.pack(device.tokenize(text), 16)], "int32")
        got = inference_session(data).run(
            ["embedding"], {"token_ids": ids, "padding_mask": np.ones_like(ids)})[0]
        np.testing.assert_allclose(got, keras_vectors(model, tokenizer, [text], 16), atol=1e-5)
