"""device/ with an XLM-R SentencePiece model: the tokenizer's ids are keras-hub's, search_text.py embeds as Keras.

The model stands in for multilingual-e5 (`BertBackbone` + `XLMRobertaTokenizer`);
its SentencePiece model is trained by the test on ten scripts.
"""

import importlib.util
import pathlib
import sys

import keras
import numpy as np
import pytest

from keras_subembed.export.cli import main as convert_main
from keras_subembed.tokenizer_kinds.sentencepiece import mediapipe_sentencepiece_model
from tests.sentencepiece_utils import HARD_TEXTS
from tests.sentencepiece_utils import TEXTS
from tests.sentencepiece_utils import bert_xlm_roberta_embedder
from tests.sentencepiece_utils import sentencepiece_proto
from tests.sentencepiece_utils import xlm_roberta_tokenizer

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from test_wordpiece_runner import DEVICE  # noqa: E402
from test_wordpiece_runner import MIXED_SCRIPT  # noqa: E402
from test_wordpiece_runner import assert_clear_error  # noqa: E402
from test_wordpiece_runner import keras_hub_ids  # noqa: E402
from test_wordpiece_runner import run_script  # noqa: E402, F401 (a fixture)

spec = importlib.util.spec_from_file_location("sentencepiece_tokenizer", DEVICE / "sentencepiece_tokenizer.py")
sentencepiece_tokenizer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sentencepiece_tokenizer)
SentencePieceTokenizer = sentencepiece_tokenizer.SentencePieceTokenizer
SEQUENCE_LENGTH = 24
# The runners use no Keras backend and the export converts in TensorFlow: tested once.
pytestmark = pytest.mark.tensorflow_only(reason="export to TFLite; the runners have no backend")


def test_tokenizer_matches_keras_hub_in_every_script_eager_and_in_tf_data():
    ours = SentencePieceTokenizer(sentencepiece_proto())
    texts = TEXTS + HARD_TEXTS + MIXED_SCRIPT
    python_path, graph_path = keras_hub_ids(xlm_roberta_tokenizer(), texts)
    for text, eager, graph in zip(texts, python_path, graph_path):
        assert ours.tokenize(text) == eager == graph, (text, ours.tokens(text))
    assert ours.vocabulary_size == xlm_roberta_tokenizer().vocabulary_size()
    assert ours.tokenize("☃") == [xlm_roberta_tokenizer().token_to_id("▁"), 3]  # <unk> is 3
    assert ours.pack([7, 8, 9], 4) == [0, 7, 8, 2] and ours.pack([], 2) == [0, 2]


def test_a_file_that_is_not_an_xlm_roberta_sentencepiece_model_is_refused():
    with pytest.raises(sentencepiece_tokenizer.SentencePieceModelError, match="not a SentencePiece model"):
        SentencePieceTokenizer(b"[PAD]\n[UNK]\n")
    renumbered = mediapipe_sentencepiece_model(sentencepiece_proto())  # starts with [CLS]
    with pytest.raises(sentencepiece_tokenizer.SentencePieceModelError, match="starts with the pieces"):
        SentencePieceTokenizer(renumbered)


def rescored(proto):
    """The model with one piece's score changed: another model, the same pieces."""
    from sentencepiece import sentencepiece_model_pb2

    model = sentencepiece_model_pb2.ModelProto.FromString(proto)
    model.pieces[10].score -= 1.0
    return model.SerializeToString()


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The tiny multilingual embedder through `keras-subembed-convert`: .tflite and .spm."""
    folder = tmp_path_factory.mktemp("multilingual")
    embedder = bert_xlm_roberta_embedder(sequence_length=SEQUENCE_LENGTH)
    embedder.save(folder / "e5.keras")
    assert convert_main([str(folder / "e5.keras"), "--tflite", str(folder / "e5.tflite")]) == 0
    return {"folder": folder, "embedder": embedder}


def test_convert_writes_the_sentencepiece_model_beside_the_file(exported):
    assert (exported["folder"] / "e5.spm").read_bytes() == sentencepiece_proto()
    assert not (exported["folder"] / "e5.vocab.txt").exists()


def test_search_text_embeds_ten_scripts_as_the_keras_model_does(exported, run_script, tmp_path):
    texts = TEXTS + [t for t in HARD_TEXTS if "\n" not in t and "\r" not in t] + ["word " * 40]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(texts) + "\n", encoding="utf-8")
    output = tmp_path / "vectors.npy"
    result = run_script("search_text.py", exported["folder"] / "e5.tflite", "--embed", corpus,
                        "--output", output, "--sequence-length", SEQUENCE_LENGTH, "--batch-size", 4)
    assert result.returncode == 0, result.stderr
    want = keras.ops.convert_to_numpy(exported["embedder"].encode_text(texts, verbose=0))
    np.testing.assert_allclose(np.load(output), want, rtol=0, atol=1e-5)
    assert "were longer than 24 tokens and were cut" in result.stderr


def test_search_text_finds_a_translation_query_by_its_own_text(exported, run_script, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    result = run_script("search_text.py", exported["folder"] / "e5.tflite", "--corpus", corpus,
                        TEXTS[7], "--top-k", 1)
    assert result.returncode == 0, result.stderr
    assert f"1. 1.0000  line 8: {TEXTS[7]}" in result.stdout


def test_a_wrong_tokenizer_file_gives_one_clear_error(exported, run_script, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("one line\n", encoding="utf-8")
    model = exported["folder"] / "e5.tflite"
    other = tmp_path / "other.spm"
    other.write_bytes(rescored(sentencepiece_proto()))
    vocabulary = tmp_path / "v.vocab.txt"
    vocabulary.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n", encoding="utf-8")
    for tokenizer, message in [
            (other, "is not the SentencePiece model the model was exported with"),
            (vocabulary, "was exported with a SentencePiece tokenizer, not the vocabulary")]:
        result = run_script("search_text.py", model, "--corpus", corpus, "q", "--vocabulary", tokenizer)
        assert_clear_error(result, message)
    # The masked-LM runner reads [MASK] from the text with WordPiece only.
    spec = importlib.util.spec_from_file_location("run_tflite", DEVICE / "run_tflite.py")
    run_tflite = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_tflite)
    with pytest.raises(run_tflite.RunnerError, match="is a SentencePiece model; this script needs a WordPiece"):
        run_tflite.load_tokenizer(model, special_tokens_in_strings=True)
    assert run_tflite.load_tokenizer(model).tokenize(TEXTS[0]) == SentencePieceTokenizer(
        sentencepiece_proto()).tokenize(TEXTS[0])


def test_convert_overwrite_keeps_a_sentencepiece_model_it_did_not_write(exported, tmp_path, capsys):
    model = exported["folder"] / "e5.keras"
    tflite = tmp_path / "e5.tflite"
    tflite.write_bytes((exported["folder"] / "e5.tflite").read_bytes())  # ours: it records the model
    foreign = tmp_path / "e5.spm"
    foreign.write_bytes(rescored(sentencepiece_proto()))
    assert convert_main([str(model), "--tflite", str(tflite), "--overwrite"]) == 2
    assert "exists and is not the SentencePiece model of the .tflite file an export wrote" in (
        capsys.readouterr().err)
    assert foreign.read_bytes() == rescored(sentencepiece_proto())


def test_mediapipe_text_is_the_packages_view_of_what_mediapipe_tokenizes():
    from keras_subembed.export.mediapipe.mediapipe_sentencepiece import ascii_lowercase

    texts = TEXTS + HARD_TEXTS + ["Hello\x00World", "\x00hidden"]
    assert [sentencepiece_tokenizer.mediapipe_text(t) for t in texts] == [
        ascii_lowercase(t) for t in texts]
    assert sentencepiece_tokenizer.mediapipe_text("Paris\x00Rome") == "paris"
