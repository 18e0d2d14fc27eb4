"""`StagedModel`: what `stage` made, frozen; a later step replaces a field in a copy."""

import dataclasses

import pytest

from keras_subembed.export.staged_model import StagedModel


def test_a_step_changes_a_copy_and_the_staged_model_stays_as_made():
    staged = StagedModel("model", "inputs", samples=[{"token_ids": [[1]]}], tokenizer_file="vocab")
    # What TFLite's recipes do: the converted model is a rounded copy.
    rounded = dataclasses.replace(staged, converted="rounded model")
    assert (rounded.model, rounded.serving_inputs, rounded.samples, rounded.tokenizer_file) == (
        "model", "inputs", [{"token_ids": [[1]]}], "vocab")
    assert rounded.converted == "rounded model" and staged.converted is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        staged.model = "another model"
