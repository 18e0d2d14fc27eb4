"""Issue 43: every exported `.tflite` / `.onnx` file gets the tokenizer `device/` reads beside it."""

import importlib.util
import os
import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest

import keras_subembed
from keras_subembed import files
from keras_subembed.export import export_onnx
from keras_subembed.export import export_tflite
from keras_subembed.export.litert import conversion
from tests.sentencepiece_utils import TEXTS as SCRIPT_TEXTS
from tests.sentencepiece_utils import bert_xlm_roberta_embedder
from tests.sentencepiece_utils import sentencepiece_proto

sys.path.insert(0, str(pathlib.Path(__file__).parent / "mediapipe"))
from test_mediapipe_format import uncased_embedder  # noqa: E402
from test_mediapipe_format import SUB  # noqa: E402
from test_mediapipe_format import VOCABULARY  # noqa: E402

DEVICE = pathlib.Path(__file__).parents[2] / "device"
pytestmark = [pytest.mark.tensorflow_only(reason="export to TFLite / ONNX traces in TensorFlow"),
              pytest.mark.usefixtures("convert_each_model_once")]
ENGLISH = ["the police said the road was closed", "rain in the city", "one new game"]


@pytest.fixture(scope="module")
def wordpiece():
    return keras_subembed.compress(uncased_embedder(), "sub", SUB)


@pytest.fixture(scope="module")
def multilingual():
    return keras_subembed.compress(bert_xlm_roberta_embedder(), "sub", {
        "assignment": "product", "num_tables": 4, "rows_per_table": 8, "reserved_ids": [0, 1, 2, 3]})


def search_text_vectors(model_path, texts, folder, sequence_length):
    """`device/search_text.py MODEL --embed` as a user runs it: no --vocabulary."""
    corpus, output = folder / "corpus.txt", folder / "vectors.npy"
    corpus.write_text("\n".join(texts) + "\n", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(DEVICE / "search_text.py"), str(model_path), "--embed", str(corpus),
         "--output", str(output), "--sequence-length", str(sequence_length)],
        capture_output=True, text=True, timeout=300, env=dict(os.environ, PYTHONPATH=""))
    assert result.returncode == 0, result.stderr
    return np.load(output)


def test_a_wordpiece_tflite_file_gets_its_vocabulary_and_search_text_runs_verbatim(
        wordpiece, tmp_path):
    report = export_tflite(wordpiece, tmp_path / "minilm.dynamic.tflite", quantization="dynamic")
    vocabulary = tmp_path / "minilm.dynamic.vocab.txt"  # the runners' name: the stem's
    assert report.tokenizer_path == str(vocabulary)
    assert f"tokenizer file     {vocabulary}" in str(report)
    assert vocabulary.read_text(encoding="utf-8").splitlines() == VOCABULARY
    got = search_text_vectors(report.path, ENGLISH, tmp_path, sequence_length=12)
    want = keras.ops.convert_to_numpy(wordpiece.encode_text(ENGLISH, verbose=0))
    np.testing.assert_allclose(got, want, atol=2e-2)


def test_a_sentencepiece_int4_file_gets_its_spm_and_search_text_runs_verbatim(
        multilingual, tmp_path):
    """The multilingual job's failure: "no vocabulary at ...int4_dynamic.vocab.txt"."""
    report = export_tflite(multilingual, tmp_path / "student.int4_dynamic.tflite",
                           quantization="int4_dynamic")
    spm = tmp_path / "student.int4_dynamic.spm"
    assert report.tokenizer_path == str(spm)
    assert spm.read_bytes() == sentencepiece_proto()  # the raw model the device tokenizer reads
    assert not (tmp_path / "student.int4_dynamic.vocab.txt").exists()
    texts = SCRIPT_TEXTS[:8]
    got = search_text_vectors(report.path, texts, tmp_path, sequence_length=24)
    rounded = conversion.recipe_model(multilingual, "int4_dynamic")
    features = multilingual.preprocessor(keras.ops.convert_to_tensor(texts))
    want = keras.ops.convert_to_numpy(rounded(features))
    cosines = np.sum(got * want, axis=-1) / np.linalg.norm(got, axis=-1) / np.linalg.norm(want, axis=-1)
    assert cosines.min() > 0.99


def test_an_onnx_file_gets_its_vocabulary_too(wordpiece, tmp_path):
    pytest.importorskip("onnxruntime")
    report = export_onnx(wordpiece, tmp_path / "minilm.onnx", verify=False)
    assert report.tokenizer_path == str(tmp_path / "minilm.vocab.txt")
    assert (tmp_path / "minilm.vocab.txt").read_text(encoding="utf-8").splitlines() == VOCABULARY
    # The same tokenizer beside a .tflite file of the same name is the same bytes: kept.
    export_tflite(wordpiece, tmp_path / "minilm.tflite", verify=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "minilm.onnx", "minilm.tflite", "minilm.vocab.txt"]


def test_a_tokenizer_file_the_package_did_not_write_is_never_replaced(wordpiece, tmp_path,
                                                                      monkeypatch):
    monkeypatch.setattr(conversion, "convert", pytest.fail)  # refused before any work
    diary = tmp_path / "m.vocab.txt"
    diary.write_text("dear diary\n")
    with pytest.raises(FileExistsError, match="m.vocab.txt' exists; pass overwrite=True"):
        export_tflite(wordpiece, tmp_path / "m.tflite")
    with pytest.raises(FileExistsError, match="m.vocab.txt' exists and is not the vocabulary of "
                       "the .tflite file an export wrote there"):
        export_tflite(wordpiece, tmp_path / "m.tflite", overwrite=True)
    assert diary.read_text() == "dear diary\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.vocab.txt"]


def test_overwrite_replaces_the_tokenizer_file_the_export_recorded(wordpiece, tmp_path):
    export_tflite(wordpiece, tmp_path / "m.tflite", verify=False)
    vocabulary = tmp_path / "m.vocab.txt"
    ours = vocabulary.read_bytes()
    # Other bytes, the same tokens: the .tflite file's fingerprint proves it ours.
    vocabulary.write_bytes(ours.replace(b"\n", b"\r\n"))
    with pytest.raises(FileExistsError, match="exists; pass overwrite=True"):
        export_tflite(wordpiece, tmp_path / "m.tflite", verify=False)
    export_tflite(wordpiece, tmp_path / "m.tflite", verify=False, overwrite=True)
    assert vocabulary.read_bytes() == ours


def test_a_failed_export_leaves_no_tokenizer_file_behind(wordpiece, tmp_path, monkeypatch):
    target = tmp_path / "m.tflite"
    real_convert = conversion.convert

    def convert_while_someone_writes(*args, **kwargs):
        target.write_text("written meanwhile")
        return real_convert(*args, **kwargs)

    monkeypatch.setattr(conversion, "convert", convert_while_someone_writes)
    with pytest.raises(FileExistsError, match="appeared while exporting"):
        export_tflite(wordpiece, target, verify=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.tflite"]
    assert target.read_text() == "written meanwhile"


def test_tokenizer_file_false_writes_none_and_a_model_without_a_tokenizer_gets_none(
        wordpiece, tmp_path):
    report = export_tflite(wordpiece, tmp_path / "a.tflite", verify=False, tokenizer_file=False)
    assert report.tokenizer_path is None and "tokenizer file     none written" in str(report)
    report = export_tflite(wordpiece.backbone, tmp_path / "b.tflite", verify=False)
    assert report.tokenizer_path is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tflite", "b.tflite"]
    with pytest.raises(ValueError, match="`tokenizer_file` must be a bool. Received: "
                       "tokenizer_file='yes'"):
        export_tflite(wordpiece, tmp_path / "c.tflite", tokenizer_file="yes")


def test_run_tflites_loader_finds_the_file_by_the_models_name(multilingual, tmp_path):
    spec = importlib.util.spec_from_file_location("run_tflite", DEVICE / "run_tflite.py")
    run_tflite = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_tflite)
    report = export_tflite(multilingual, tmp_path / "e5.float32.tflite", verify=False)
    assert run_tflite.vocabulary_path_of(report.path) == pathlib.Path(report.tokenizer_path)
    tokenizer = run_tflite.load_tokenizer(report.path)  # checked against the file's fingerprint
    want = keras.ops.convert_to_numpy(multilingual.preprocessor.tokenizer(SCRIPT_TEXTS[3])).tolist()
    assert tokenizer.tokenize(SCRIPT_TEXTS[3]) == want
    assert files.is_exported_tokenizer_file(report.tokenizer_path,
                                            files.tflite_metadata_of(report.path))
