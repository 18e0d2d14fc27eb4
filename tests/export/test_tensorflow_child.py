"""The TensorFlow process's side of an export from another backend: the request read,
the export's result or error written back, an error that does not pickle as its text."""

import pickle

import pytest

from keras_subembed import export
from keras_subembed.export import tensorflow_child


def serve(tmp_path, monkeypatch, fake_export, **kwargs):
    request, response = tmp_path / "request.pkl", tmp_path / "response.pkl"
    request.write_bytes(pickle.dumps(kwargs))
    monkeypatch.setattr(export, "export", fake_export)
    tensorflow_child.serve_request(str(request), str(response))
    return pickle.loads(response.read_bytes())


def test_the_result_goes_back_and_samples_become_a_dataset_again(tmp_path, monkeypatch):
    received = {}

    def fake_export(**kwargs):
        received.update(kwargs)
        return {"file_bytes": 123}

    outcome = serve(tmp_path, monkeypatch, fake_export, model="m.keras", filepath="m.tflite",
                    representative_dataset=[{"token_ids": [[1, 2]]}, {"token_ids": [[3]]}])
    assert outcome == (True, {"file_bytes": 123})
    assert received["model"] == "m.keras" and received["filepath"] == "m.tflite"
    # A representative dataset is a function returning an iterator (the converter's kind).
    assert list(received["representative_dataset"]()) == [{"token_ids": [[1, 2]]},
                                                          {"token_ids": [[3]]}]


def test_an_error_goes_back_as_itself_or_as_its_text(tmp_path, monkeypatch):
    def refuse(**kwargs):
        raise FileExistsError("'m.tflite' exists; pass overwrite=True to replace it.")

    succeeded, error = serve(tmp_path, monkeypatch, refuse, model="m.keras")
    assert not succeeded and type(error) is FileExistsError
    assert str(error) == "'m.tflite' exists; pass overwrite=True to replace it."

    class LocalError(ValueError):  # a class defined here does not pickle
        pass

    def fail(**kwargs):
        raise LocalError("the model has no tokenizer")

    succeeded, error = serve(tmp_path, monkeypatch, fail, model="m.keras")
    assert not succeeded and type(error) is RuntimeError
    assert str(error) == "LocalError: the model has no tokenizer"
    with pytest.raises(RuntimeError, match="LocalError"):
        raise error
