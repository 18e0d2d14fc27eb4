"""A compressed BERT embedder ships as a MediaPipe Tasks file that embeds raw strings."""

import re
import sys
from pathlib import Path

import keras
import keras_hub
import numpy as np
import pytest

import keras_subembed
from keras_subembed.export import export_mediapipe

sys.path.insert(0, str(Path(__file__).parents[2] / "models" / "families"))
from test_compressed_text_embedder import SIZES  # noqa: E402
from test_compressed_text_embedder import SUB  # noqa: E402
from test_compressed_text_embedder import VOCABULARY  # noqa: E402

# Conversion traces the model in TensorFlow; on JAX only the subprocess path is tested.
tensorflow_only = pytest.mark.tensorflow_only(reason="it traces the model in TensorFlow")
# The wheel exists for Linux x86-64 / aarch64, macOS and Windows; CI installs it.
pytest.importorskip("mediapipe", reason="no `mediapipe` wheel for this platform")
# Each model and quantization converted once (tests/export/conftest.py).
pytestmark = pytest.mark.usefixtures("convert_each_model_once")

# Case and punctuation that MediaPipe's tokenizer must handle as the model's does.
TEXTS = ["The police said the road was closed.", "Rain in the CITY, one new game!",
         "the market (news) said: two people", "world"]


def uncased_embedder(strip_accents=False, lowercase=True, sizes=SIZES):
    keras.utils.set_random_seed(3)
    backbone = keras_hub.models.BertBackbone(len(VOCABULARY), **sizes)
    tokenizer = keras_hub.models.BertTokenizer(
        vocabulary=VOCABULARY, lowercase=lowercase, strip_accents=strip_accents)
    preprocessor = keras_hub.models.BertTextEmbedderPreprocessor(tokenizer, sequence_length=12)
    return keras_hub.models.BertTextEmbedder(backbone, preprocessor, pooling_mode="mean")


@pytest.fixture(scope="module")
def small():
    return keras_subembed.compress(uncased_embedder(), "sub", SUB)


def mediapipe_vectors(path, texts):
    from mediapipe.tasks.python.text import text_embedder

    with text_embedder.TextEmbedder.create_from_model_path(str(path)) as task:
        return np.stack([task.embed(text).embeddings[0].embedding for text in texts])


@tensorflow_only
@pytest.mark.parametrize("quantization", [None, "dynamic", "float16"])
def test_the_file_runs_in_mediapipe_from_raw_strings_with_the_keras_vectors(
        small, tmp_path, quantization):
    from keras_subembed.export.litert.flatbuffer import op_names

    path = tmp_path / "small.tflite"
    report = export_mediapipe(small, path, quantization=quantization, texts=TEXTS)
    assert (report.inputs, report.outputs) == (("ids", "mask", "segment_ids"), ("embedding",))
    assert report.verified_sequence_lengths == (12,)
    assert report.cosine_to_float > 0.999
    data = path.read_bytes()
    assert not {"READ_VARIABLE", "VAR_HANDLE"} & set(op_names(data))  # frozen
    import zipfile

    assert zipfile.ZipFile(path).namelist() == ["vocab.txt"]  # MediaPipe's associated file
    # MediaPipe's own loader, its own tokenizer, raw strings; the vectors are Keras'.
    got = mediapipe_vectors(path, TEXTS)
    want = keras.ops.convert_to_numpy(small.encode_text(TEXTS, verbose=0))
    np.testing.assert_allclose(got, want, atol=1e-5 if quantization is None else 1e-2)
    with pytest.raises(FileExistsError):
        export_mediapipe(small, path, quantization=quantization, verify=False)


@tensorflow_only
def test_mediapipe_lowercases_and_splits_punctuation_but_keeps_accents():
    from keras_subembed.export.mediapipe.mediapipe_token_ids import mediapipe_token_ids

    texts = ["The CITY, (rain)!", "naïve Café"]
    got = mediapipe_token_ids(VOCABULARY, texts, sequence_length=16)
    stripping = keras_hub.models.BertTokenizer(
        vocabulary=VOCABULARY, lowercase=True, strip_accents=True)
    want = [[2, *keras.ops.convert_to_numpy(stripping(text)).tolist(), 3] for text in texts]
    assert got[0] == want[0]
    unk = VOCABULARY.index("[UNK]")
    assert want[1][1:3] == [VOCABULARY.index("naive"), VOCABULARY.index("cafe")]
    assert got[1] == [2, unk, unk, 3]  # accents kept: the words are not in the vocabulary


@tensorflow_only
def test_a_real_token_with_id_0_is_kept_when_pad_is_another_id():
    """Issue 32 item 9: every id 0 was taken for padding."""
    from keras_subembed.export.mediapipe.mediapipe_token_ids import mediapipe_token_ids

    vocabulary = ["the"] + [token for token in VOCABULARY if token != "the"]
    ids = mediapipe_token_ids(vocabulary, ["the city the"], sequence_length=8)
    cls, sep, city = (vocabulary.index(token) for token in ("[CLS]", "[SEP]", "city"))
    assert ids == [[cls, 0, city, 0, sep]]


@pytest.mark.parametrize("length", [0, -5, 2, 2.5, True, "16"])
def test_a_bad_probe_length_is_named_before_any_conversion(length):
    """Issue 32 item 16: 0 gave a C++ trace, -5 a raw TensorFlow error."""
    from keras_subembed.export.mediapipe.mediapipe_token_ids import mediapipe_token_ids

    with pytest.raises(ValueError, match=f"`sequence_length` must be an int.*"
                       f"Received: sequence_length={re.escape(repr(length))}"):
        mediapipe_token_ids(VOCABULARY, ["the city"], sequence_length=length)


@tensorflow_only
def test_accent_stripping_models_warn_or_are_refused_and_cased_models_are_refused(tmp_path):
    stripping = uncased_embedder(strip_accents=True)
    with pytest.raises(ValueError, match="strips accents"):
        export_mediapipe(stripping, tmp_path / "a.tflite", check_normalization="raise")
    with pytest.warns(UserWarning, match="does not"):
        export_mediapipe(stripping, tmp_path / "a.tflite", verify=False)
    with pytest.raises(ValueError, match="keeps case"):
        export_mediapipe(uncased_embedder(lowercase=False), tmp_path / "b.tflite")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tflite"]


@tensorflow_only
@pytest.mark.parametrize("kwargs, match", [
    ({"quantization": "int8"}, "quantization"),
    ({"check_normalization": "ignore"}, "check_normalization"),
    ({"sequence_length": 2}, "sequence_length"),
    ({"sequence_length": 25}, "sequence_length"),
    ({"texts": "one text"}, "texts"),
    ({"latency_runs": -1}, "latency_runs"),
    ({"overwrite": "False"}, "`overwrite` must be a bool"),  # issue 32 item 12
])
def test_bad_arguments_are_named(small, tmp_path, kwargs, match):
    with pytest.raises(ValueError, match=match):
        export_mediapipe(small, tmp_path / "x.tflite", **kwargs)
    assert not list(tmp_path.iterdir())


@tensorflow_only
def test_an_embedder_without_wordpiece_is_refused(tmp_path):
    xlmr = keras_hub.models.XLMRobertaTextEmbedder(
        keras_hub.models.XLMRobertaBackbone(50, **SIZES), pooling_mode="cls")
    with pytest.raises(ValueError, match="WordPiece"):
        export_mediapipe(xlmr, tmp_path / "x.tflite")
    with pytest.raises(TypeError, match="TextEmbedder"):
        export_mediapipe(xlmr.backbone, tmp_path / "x.tflite")


@pytest.mark.jax_only(reason="a live JAX model goes through a TensorFlow subprocess")
def test_a_live_jax_model_exports_through_a_tensorflow_process(small, tmp_path):
    report = export_mediapipe(small, tmp_path / "small.tflite", texts=TEXTS)
    assert report.cosine_to_float > 0.999
    got = mediapipe_vectors(tmp_path / "small.tflite", TEXTS)
    np.testing.assert_allclose(got, keras.ops.convert_to_numpy(small.encode_text(TEXTS, verbose=0)),
                               atol=1e-5)


# --- issue 43: the int4 transformer, and the fixed length chosen from text ------------


def rounded_vectors(embedder, recipe, texts, sequence_length):
    """Keras' vectors with the kernels `recipe` rounds as the file stores them."""
    from keras_subembed.export.mediapipe.mediapipe_format import keras_vectors
    from keras_subembed.export.litert.conversion import recipe_model

    _, rounded = keras_vectors([embedder, recipe_model(embedder, recipe)], texts, sequence_length)
    return rounded


@tensorflow_only
def test_an_int4_file_runs_in_mediapipe_as_keras_with_its_rounded_kernels(small, tmp_path):
    import zipfile

    from keras_subembed.export.mediapipe.mediapipe_format import MediaPipeFormat
    from keras_subembed.export.output_parity import row_cosines

    dynamic = export_mediapipe(small, tmp_path / "dynamic.tflite", quantization="dynamic",
                               texts=TEXTS)
    report = export_mediapipe(small, tmp_path / "int4.tflite", quantization="int4_dynamic",
                              texts=TEXTS)
    assert report.file_bytes < dynamic.file_bytes
    assert report.quantized_ops > 0 and report.constant_bytes["int4"] > 0  # the int4 label holds
    # MediaPipe's metadata, added after quantizing, survives: its loader, its tokenizer.
    assert zipfile.ZipFile(tmp_path / "int4.tflite").namelist() == ["vocab.txt"]
    got = mediapipe_vectors(tmp_path / "int4.tflite", TEXTS)
    want = rounded_vectors(small, "int4_dynamic", [t.lower() for t in TEXTS], 12)
    assert row_cosines(got, want).mean() > MediaPipeFormat.min_cosines["int4_dynamic"]
    assert report.sequence_length == 12 and report.tokenizer_path is None


@tensorflow_only
def test_an_int4_file_is_held_to_the_rounded_models_vectors(small, tmp_path, monkeypatch):
    from keras_subembed.export import ExportVerificationError
    from keras_subembed.export.mediapipe import mediapipe_format as mediapipe_module

    monkeypatch.setitem(mediapipe_module.MediaPipeFormat.min_cosines, "int4_dynamic", 1.5)  # unreachable
    with pytest.raises(ExportVerificationError, match="against Keras with the file's rounded "
                       "kernels.*at least 1.5.*int4.tflite' was not written"):
        export_mediapipe(small, tmp_path / "int4.tflite", quantization="int4_dynamic", texts=TEXTS)
    assert not list(tmp_path.iterdir())


def test_the_fixed_length_covers_the_asked_share_of_the_texts(small):
    from keras_subembed.export import mediapipe_sequence_length

    # One token per word, [CLS] and [SEP]: 3 .. 12 tokens.
    texts = [" ".join(["the"] * words) for words in range(1, 11)]
    assert mediapipe_sequence_length(small, texts, coverage=1.0, multiple=1) == 12
    assert mediapipe_sequence_length(small, texts, coverage=0.5, multiple=1) == 7
    assert mediapipe_sequence_length(small, texts, coverage=0.5) == 8
    assert mediapipe_sequence_length(small, texts, coverage=0.01, multiple=1) == 3
    assert mediapipe_sequence_length(small, ["", "the"], coverage=1.0, multiple=1) == 3
    # ASCII capitals are lowercased first, as MediaPipe does.
    assert mediapipe_sequence_length(small, ["THE POLICE"], multiple=1) == 4
    # Capped at the position table (24), whatever the texts or the rounding.
    assert mediapipe_sequence_length(small, ["the " * 100]) == 24
    assert mediapipe_sequence_length(small, ["the " * 20], multiple=16) == 24
    # A tokenizer alone knows no limit.
    tokenizer = small.preprocessor.tokenizer
    assert mediapipe_sequence_length(tokenizer, ["the " * 100], multiple=1) == 102


@pytest.mark.parametrize("kwargs, error, match", [
    ({"texts": "one text"}, ValueError, "`texts` must be a non-empty list of strings. "
     "Received: texts='one text'"),
    ({"texts": []}, ValueError, r"Received: texts=\[\]"),
    ({"texts": ["a", 3]}, ValueError, r"Received: texts=\['a', 3\]"),
    ({"coverage": 0}, ValueError, r"`coverage` must be a number in \(0, 1\]. Received: coverage=0"),
    ({"coverage": 1.5}, ValueError, "Received: coverage=1.5"),
    ({"coverage": True}, ValueError, "Received: coverage=True"),
    ({"coverage": "0.9"}, ValueError, "Received: coverage='0.9'"),
    ({"multiple": 0}, ValueError, "`multiple` must be a positive integer. Received: multiple=0"),
    ({"multiple": 2.5}, ValueError, "Received: multiple=2.5"),
])
def test_the_fixed_length_helper_names_a_bad_argument(small, kwargs, error, match):
    from keras_subembed.export import mediapipe_sequence_length

    with pytest.raises(error, match=match):
        mediapipe_sequence_length(small, **{"texts": ["the city"], **kwargs})


def test_the_fixed_length_helper_names_a_model_it_cannot_read(small):
    from keras_subembed.export import mediapipe_sequence_length

    with pytest.raises(TypeError, match="`tokenizer_or_embedder` must be a keras-hub "
                       "TextEmbedder.*Received: tokenizer_or_embedder=CompressedBertBackbone"):
        mediapipe_sequence_length(small.backbone, ["the city"])


@tensorflow_only
def test_an_int4_file_past_the_quantizers_256_kb_keeps_its_buffers_under_the_metadata(tmp_path):
    """ai-edge-quantizer stores a larger model's buffers past the flatbuffer, by offset;
    MediaPipe's metadata writer, rewriting the flatbuffer, broke them: "buffer 129
    specified an out of range offset" on multilingual-e5-small's student."""
    from keras_subembed.export.mediapipe.mediapipe_format import MediaPipeFormat
    from keras_subembed.export.output_parity import row_cosines

    embedder = uncased_embedder(sizes=dict(SIZES, num_layers=1, hidden_dim=256,
                                           intermediate_dim=1024))
    report = export_mediapipe(embedder, tmp_path / "int4.tflite", quantization="int4_dynamic",
                              texts=TEXTS)
    assert report.constant_bytes["int4"] > 256 * 1024
    got = mediapipe_vectors(tmp_path / "int4.tflite", TEXTS)
    want = rounded_vectors(embedder, "int4_dynamic", [t.lower() for t in TEXTS], 12)
    assert row_cosines(got, want).mean() > MediaPipeFormat.min_cosines["int4_dynamic"]
