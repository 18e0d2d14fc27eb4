"""A compressed BERT embedder ships as a MediaPipe Tasks file that embeds raw strings."""

import keras
import keras_hub
import numpy as np
import pytest

from keras_subembed.export import export_mediapipe
from tests.export.mediapipe.mediapipe_utils import SIZES
# tests/export/test_tokenizer_file.py imports SUB and VOCABULARY (and uncased_embedder) from here.
from tests.export.mediapipe.mediapipe_utils import SUB  # noqa: F401
from tests.export.mediapipe.mediapipe_utils import VOCABULARY  # noqa: F401
from tests.export.mediapipe.mediapipe_utils import uncased_embedder

# Conversion traces the model in TensorFlow; on JAX only the subprocess path is tested.
tensorflow_only = pytest.mark.tensorflow_only(reason="it traces the model in TensorFlow")
# The wheel exists for Linux x86-64 / aarch64, macOS and Windows; CI installs it.
pytest.importorskip("mediapipe", reason="no `mediapipe` wheel for this platform")
# Each model and quantization converted once (tests/export/conftest.py).
pytestmark = pytest.mark.usefixtures("convert_each_model_once")

# Case and punctuation that MediaPipe's tokenizer must handle as the model's does.
TEXTS = ["The police said the road was closed.", "Rain in the CITY, one new game!",
         "the market (news) said: two people", "world"]


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
