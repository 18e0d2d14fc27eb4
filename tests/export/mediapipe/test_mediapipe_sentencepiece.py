"""A BERT embedder with an XLM-R SentencePiece tokenizer ships as a MediaPipe TextEmbedder file."""

import sys
import zipfile
from pathlib import Path

import keras
import numpy as np
import pytest

import keras_subembed
from keras_subembed.export import export_mediapipe
from keras_subembed.export.mediapipe.mediapipe_sentencepiece import ascii_lowercase
from tests.sentencepiece_utils import HARD_TEXTS
from tests.sentencepiece_utils import SCRIPT_TEXTS
from tests.sentencepiece_utils import TEXTS
from tests.sentencepiece_utils import bert_xlm_roberta_embedder
from tests.sentencepiece_utils import keras_ids
from tests.sentencepiece_utils import xlm_roberta_tokenizer

sys.path.insert(0, str(Path(__file__).parent))
from test_mediapipe_format import mediapipe_vectors  # noqa: E402

pytest.importorskip("mediapipe", reason="no `mediapipe` wheel for this platform")
tensorflow_only = pytest.mark.tensorflow_only(reason="it traces the model in TensorFlow")
SUB = {"assignment": "product", "num_tables": 4, "rows_per_table": 8, "reserved_ids": [0, 1, 2, 3]}


def test_ascii_lowercase_lowercases_a_to_z_only():
    assert ascii_lowercase("Paris ÉTÉ İstanbul ΑΘΗΝΑ Москва ＡＢＣ") == "paris ÉtÉ İstanbul ΑΘΗΝΑ Москва ＡＢＣ"


@tensorflow_only
def test_mediapipe_feeds_the_keras_ids_of_the_ascii_lowercased_text_in_every_script():
    """A probe file whose output is its `ids` input, run in MediaPipe's TextEmbedder."""
    from keras_subembed.export.mediapipe.mediapipe_token_ids import mediapipe_token_ids

    tokenizer = xlm_roberta_tokenizer()
    texts = TEXTS + [t for t in HARD_TEXTS if t.strip()]
    got = mediapipe_token_ids(tokenizer, texts, sequence_length=64)
    want = [[0, *keras_ids(tokenizer, ascii_lowercase(t)), 2] for t in texts]
    assert got == want
    cased = [[0, *keras_ids(tokenizer, t), 2] for t in texts]
    assert got[0] != cased[0]  # "The ... Fox": the capitals are lowercased
    # Cut to the length: <s>, the first pieces, </s>, as Keras' packer cuts.
    short = mediapipe_token_ids(tokenizer, [TEXTS[0]], sequence_length=5)
    assert short == [[0, *want[0][1:4], 2]]


@pytest.fixture(scope="module")
def small():
    return keras_subembed.compress(bert_xlm_roberta_embedder(), "sub", SUB)


@tensorflow_only
def test_the_file_embeds_raw_strings_of_ten_scripts_as_keras_embeds_them_lowercased(small, tmp_path):
    path = tmp_path / "multilingual.tflite"
    with pytest.warns(UserWarning, match="lowercases ASCII letters"):
        report = export_mediapipe(small, path, texts=TEXTS)
    assert report.cosine_to_float > 0.999
    assert report.verified_sequence_lengths == (24,)
    assert zipfile.ZipFile(path).namelist() == ["sentencepiece.model"]
    got = mediapipe_vectors(path, TEXTS)
    lowered = keras.ops.convert_to_numpy(
        small.encode_text([ascii_lowercase(t) for t in TEXTS], verbose=0))
    np.testing.assert_allclose(got, lowered, atol=1e-5)
    cased = keras.ops.convert_to_numpy(small.encode_text(TEXTS, verbose=0))
    latin = len(SCRIPT_TEXTS["Latin"])
    # Capitals change the vectors; scripts without A-Z embed exactly as cased Keras.
    assert np.abs(got[:latin] - cased[:latin]).max() > 1e-3
    np.testing.assert_allclose(got[latin:], cased[latin:], atol=1e-5)


@tensorflow_only
def test_default_verification_text_comes_from_the_sentencepiece_vocabulary(small, tmp_path):
    with pytest.warns(UserWarning):
        report = export_mediapipe(small, tmp_path / "x.tflite", quantization="dynamic")
    assert report.cosine_to_float > 0.99


@tensorflow_only
def test_check_normalization_raise_refuses_the_ascii_lowercasing(small, tmp_path):
    with pytest.raises(ValueError, match="lowercases ASCII letters.*check_normalization"):
        export_mediapipe(small, tmp_path / "x.tflite", check_normalization="raise")
    assert not list(tmp_path.iterdir())


NUL_TEXTS = ["Hello\x00World", "\x00hidden", "The end\x00 after the end"]


def test_ascii_lowercase_ends_the_text_at_nul_as_mediapipe_does():
    assert [ascii_lowercase(t) for t in NUL_TEXTS] == ["hello", "", "the end"]


@tensorflow_only
def test_mediapipe_feeds_the_ids_of_the_text_before_its_first_nul():
    from keras_subembed.export.mediapipe.mediapipe_token_ids import mediapipe_token_ids

    tokenizer = xlm_roberta_tokenizer()
    got = mediapipe_token_ids(tokenizer, NUL_TEXTS, sequence_length=64)
    assert got == [[0, *keras_ids(tokenizer, ascii_lowercase(t)), 2] for t in NUL_TEXTS]


@tensorflow_only
def test_an_int4_file_keeps_its_sentencepiece_model_and_the_rounded_models_vectors(small, tmp_path):
    from keras_subembed.export.mediapipe.mediapipe_format import MediaPipeFormat
    from keras_subembed.export.output_parity import row_cosines
    from test_mediapipe_format import rounded_vectors

    path = tmp_path / "multilingual.int4.tflite"
    with pytest.warns(UserWarning, match="lowercases ASCII letters"):
        report = export_mediapipe(small, path, quantization="int4_dynamic", texts=TEXTS)
    assert report.constant_bytes["int4"] > 0
    assert zipfile.ZipFile(path).namelist() == ["sentencepiece.model"]  # added after quantizing
    got = mediapipe_vectors(path, TEXTS)
    want = rounded_vectors(small, "int4_dynamic", [ascii_lowercase(t) for t in TEXTS], 24)
    assert row_cosines(got, want).mean() > MediaPipeFormat.min_cosines["int4_dynamic"]


def test_the_fixed_length_counts_the_pieces_of_the_ascii_lowercased_text():
    from keras_subembed.export import mediapipe_sequence_length

    tokenizer = xlm_roberta_tokenizer()
    lowered = [len(keras_ids(tokenizer, ascii_lowercase(text))) + 2 for text in TEXTS]
    cased = [len(keras_ids(tokenizer, text)) + 2 for text in TEXTS]
    assert lowered != cased  # the capitals change the pieces
    for text, count in zip(TEXTS, lowered):
        assert mediapipe_sequence_length(tokenizer, [text], multiple=1) == max(3, count)
    assert mediapipe_sequence_length(tokenizer, TEXTS, coverage=1.0, multiple=1) == max(lowered)
