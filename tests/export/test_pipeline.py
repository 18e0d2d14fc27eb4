"""`export(model, filepath, format=...)`: one pipeline; a new format is one class and its registration."""

import io

import keras
import numpy as np
import pytest

from keras_subembed.export import ExportFormat
from keras_subembed.export import ExportVerificationError
from keras_subembed.export import export
from keras_subembed.models import find_token_embedding
from keras_subembed.export import register_format
from keras_subembed.export import pipeline
from keras_subembed.export.mediapipe.mediapipe_format import MediaPipeFormat
from keras_subembed.export.onnx.onnx_format import ONNXFormat
from keras_subembed.export.staged_model import StagedModel
from keras_subembed.export.tflite.tflite_format import TFLiteFormat

# The pipeline converts in TensorFlow; on JAX it hands a `.keras` file to a
# TensorFlow process, where a format a test registers does not exist.
pytestmark = pytest.mark.tensorflow_only(reason="the export pipeline runs on TensorFlow")


@pytest.fixture
def npz_format():
    """A throw-away format: the token table as an `.npz` file, rows looked up by the app."""

    @register_format("npz_table")
    class NpzTableFormat(ExportFormat):
        description = "an .npz file"

        def is_ours(self, path):
            return "written_by_test" in np.load(path)

        def convert(self, staged, scratch):
            buffer = io.BytesIO()
            table = keras.ops.convert_to_numpy(find_token_embedding(staged.model).embeddings)
            np.savez(buffer, table=table, written_by_test=True)
            return buffer.getvalue()

        def run(self, data, num_threads=None):
            table = np.load(io.BytesIO(data))["table"]
            return lambda sample: {"outputs": table[sample["token_ids"]]}

        def file_facts(self, staged, data, embedding):
            return dict(embedding_bytes=len(data), ops=("GATHER",),
                        outputs=("outputs",))

    yield "npz_table"
    del pipeline.FORMATS["npz_table"]


@pytest.fixture
def model():
    token_ids = keras.Input((None,), dtype="int32", name="token_ids")
    return keras.Model(token_ids, keras.layers.Embedding(20, 4)(token_ids))


def test_a_registered_format_runs_the_whole_pipeline(npz_format, model, tmp_path):
    path = tmp_path / "table.npz"
    report = export(model, path, format=npz_format, latency_runs=2)
    np.testing.assert_array_equal(np.load(path)["table"], model.layers[1].embeddings.numpy())
    assert report.file_bytes == path.stat().st_size and report.quantization == "float32"
    assert report.max_abs_error == 0.0 and report.cosine_to_float == 1.0
    assert report.verified_sequence_lengths == (16, 128) and report.latency_ms > 0
    assert (report.inputs, report.outputs) == (("token_ids",), ("outputs",))
    assert report.dense_embedding_bytes == 20 * 4 * 4
    # What every format gets from the pipeline: checked arguments and targets.
    with pytest.raises(FileExistsError, match="exists; pass overwrite=True"):
        export(model, path, format=npz_format)
    export(model, path, format=npz_format, overwrite=True)
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, table=np.zeros(3))
    with pytest.raises(FileExistsError, match="is not an .npz file; overwrite=True only replaces"):
        export(model, foreign, format=npz_format, overwrite=True)
    with pytest.raises(ValueError, match=r"`quantization` must be one of \(None,\)"):
        export(model, tmp_path / "q.npz", format=npz_format, quantization="dynamic")
    with pytest.raises(TypeError, match="unexpected keyword argument 'texts'"):
        export(model, tmp_path / "t.npz", format=npz_format, texts=["a"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["foreign.npz", "table.npz"]


def test_an_unknown_format_is_named_with_the_registered_ones(model, tmp_path):
    with pytest.raises(ValueError, match=r"`format` must be one of \['mediapipe', 'onnx', "
                       r"'saved_model', 'tflite'\]. Received: format='litert'"):
        export(model, tmp_path / "m.tflite", format="litert")
    with pytest.raises(ValueError, match="registered already"):
        register_format("tflite")(ExportFormat)


def test_stage_returns_what_it_made_and_leaves_the_format_as_it_was(model):
    exporter = pipeline.FORMATS["tflite"](sequence_lengths=[5, 7])
    arguments = dict(vars(exporter))
    staged = exporter.stage(model)
    assert isinstance(staged, StagedModel) and vars(exporter) == arguments
    assert staged.model is model and staged.converted is model  # no recipe: nothing rounded
    assert staged.serving_inputs.names == ["token_ids"] and staged.tokenizer_file is None
    assert [sample["token_ids"].shape[1] for sample in staged.samples] == [5, 7]
    # Nothing to verify or time: no samples are made.
    assert pipeline.FORMATS["tflite"](verify=False).stage(model).samples is None


def test_every_registered_format_states_its_tolerance_for_each_quantization():
    assert {"tflite", "mediapipe", "onnx", "saved_model"} <= set(pipeline.FORMATS)
    for name, cls in pipeline.FORMATS.items():
        assert set(cls.quantizations) <= set(cls.tolerances), name
        assert all(0 < cls.tolerances[q] <= 1 for q in cls.quantizations), name
    # The bounds each format states, with what they have always been.
    assert TFLiteFormat.tolerances["dynamic"] == 0.1 and ONNXFormat.tolerances["int4"] == 0.5
    assert MediaPipeFormat.min_cosines[None] == 0.999 and TFLiteFormat.min_cosines is None


def test_verification_holds_a_file_to_its_formats_tolerance(tmp_path):
    """A subclass that tightens the dynamic range bound fails where its parent passes."""
    token_ids = keras.Input((None,), dtype="int32", name="token_ids")
    vectors = keras.layers.Dense(64, name="head")(keras.layers.Embedding(20, 32)(token_ids))
    model = keras.Model(token_ids, vectors)

    @register_format("tflite_strict")
    class StrictTFLiteFormat(TFLiteFormat):
        tolerances = {**TFLiteFormat.tolerances, "dynamic": 1e-9}

    try:
        report = export(model, tmp_path / "m.tflite", quantization="dynamic")
        assert 0 < report.max_abs_error <= report.tolerance
        # The format's bound, or tighter: 4 times the error of the int8-rounded model.
        assert report.tolerance <= TFLiteFormat.tolerances["dynamic"]
        with pytest.raises(ExportVerificationError,
                           match=r"StrictTFLiteFormat\.tolerances\['dynamic'\] = 1e-09 of the "
                                 r"largest \|output\|.*'.*strict\.tflite' was not written"):
            export(model, tmp_path / "strict.tflite", format="tflite_strict",
                   quantization="dynamic")
        assert not (tmp_path / "strict.tflite").exists()
    finally:
        del pipeline.FORMATS["tflite_strict"]


@pytest.mark.parametrize("attributes, error, message", [
    (dict(tolerances=0.1), TypeError,
     "`Loose.tolerances` must be a dict {quantization: the largest abs error, a fraction of "
     "the largest |output|}. Received: tolerances=0.1"),
    (dict(quantizations=(None, "dynamic"), tolerances={None: 1e-4}), ValueError,
     "`Loose.tolerances` must have an entry for each of `quantizations` (None, 'dynamic'); "
     "it lacks ['dynamic']. Received: tolerances={None: 0.0001}"),
    (dict(tolerances={None: 0}), ValueError,
     "`Loose.tolerances[None]` must be a number in (0, 1] (the largest abs error, a fraction "
     "of the largest |output|). Received: tolerances[None]=0"),
    (dict(tolerances={None: 2.0}), ValueError,
     "`Loose.tolerances[None]` must be a number in (0, 1] (the largest abs error, a fraction "
     "of the largest |output|). Received: tolerances[None]=2.0"),
    (dict(tolerances={None: True}), ValueError,
     "`Loose.tolerances[None]` must be a number in (0, 1] (the largest abs error, a fraction "
     "of the largest |output|). Received: tolerances[None]=True"),
    (dict(min_cosines={None: 1.5}), ValueError,
     "`Loose.min_cosines[None]` must be a number in (0, 1] (the lowest mean cosine). "
     "Received: min_cosines[None]=1.5"),
    (dict(min_cosines=[0.99]), TypeError,
     "`Loose.min_cosines` must be a dict {quantization: the lowest mean cosine}. "
     "Received: min_cosines=[0.99]"),
])
def test_register_format_checks_the_tolerances_it_registers(attributes, error, message):
    loose = type("Loose", (ExportFormat,), attributes)
    with pytest.raises(error) as raised:
        register_format("npz_loose")(loose)
    assert str(raised.value) == message
    assert "npz_loose" not in pipeline.FORMATS


def test_register_format_takes_a_name_and_an_export_format_class():
    with pytest.raises(TypeError, match=r"`name` must be a non-empty str.*Received: name=5"):
        register_format(5)
    with pytest.raises(TypeError, match=r"`register_format\('npz_dict'\)` decorates a subclass "
                                        r"of `ExportFormat`\. Received: \{\}"):
        register_format("npz_dict")({})
    assert 5 not in pipeline.FORMATS and "npz_dict" not in pipeline.FORMATS


def test_a_format_is_named_with_a_list_refused(model, tmp_path):
    with pytest.raises(ValueError, match=r"`format` must be one of \[.*\]\. "
                                         r"Received: format=\['tflite'\]"):
        export(model, tmp_path / "m.tflite", format=["tflite"])


@pytest.fixture
def bare_format():
    """A format that defines only `is_ours` and `convert`: the pipeline must say what it lacks."""

    @register_format("npz_bare")
    class BareFormat(ExportFormat):
        description = "an .npz file"

        def is_ours(self, path):
            return False

        def convert(self, staged, scratch):
            return b"bytes"

    yield "npz_bare"
    del pipeline.FORMATS["npz_bare"]


def test_an_undefined_step_names_the_method_and_the_format(bare_format, model, tmp_path):
    with pytest.raises(NotImplementedError, match=r"The export format 'npz_bare' \(BareFormat\) "
                                                  r"must define `run\(data, num_threads=None\)`"):
        export(model, tmp_path / "t.npz", format=bare_format)
    # Unverified, the first step it lacks is `file_facts`; the file is not left behind.
    with pytest.raises(NotImplementedError, match=r"'npz_bare' \(BareFormat\) must define "
                                                  r"`file_facts\(staged, data, embedding\)`"):
        export(model, tmp_path / "t.npz", format=bare_format, verify=False)
    assert list(tmp_path.iterdir()) == []


def test_an_unverified_file_reports_no_error_rather_than_zero(npz_format, model, tmp_path):
    report = export(model, tmp_path / "t.npz", format=npz_format, verify=False)
    assert report.max_abs_error is None and report.cosine_to_float is None
    assert report.verified_sequence_lengths == ()
    lines = str(report).splitlines()
    assert "max abs error      not verified" in lines
    assert "cosine to float    not verified" in lines
