"""`.keras` files written by keras_subembed 0.2.0 still load, with the same outputs.

The files in `tests/data/legacy/` were written once by
`tests/data/legacy/make_legacy_files.py` with the release before issue #18
(commit f0ab34d), and are never rewritten: they stand for users' saved models.
Each `NAME.npz` beside `NAME.keras` holds the inputs and the outputs the model
gave when it was saved.
"""

import json
import pathlib
import zipfile

import keras
import numpy as np
import pytest

import keras_subembed  # noqa: F401  (registers the classes the files name)
from tests.layers.layer_contract import assert_float32_close

LEGACY = pathlib.Path(__file__).parents[1] / "data" / "legacy"
# Longest chain of float32 sums in these tiny models (width 16, feed-forward 32,
# sequence 12, a few layers): outputs may differ from the stored ones only by
# the reordering of such sums (another CPU, another backend).
REDUCTION_LENGTH = 256


def load(name):
    model = keras.saving.load_model(LEGACY / f"{name}.keras")
    with np.load(LEGACY / f"{name}.npz") as stored:
        reference = dict(stored)
    return model, reference


def stored_inputs(reference):
    return {key[3:]: value for key, value in reference.items() if key.startswith("in_")}


def assert_outputs_equal(model, reference):
    inputs = stored_inputs(reference)
    if isinstance(model.input, dict) and "segment_ids" in model.input:
        # keras-hub's BertTextEmbedder takes BERT's segment ids (0: one sentence).
        inputs["segment_ids"] = np.zeros_like(inputs["token_ids"])
    outputs = model(inputs, training=False)
    if isinstance(outputs, dict):
        assert sorted(f"out_{key}" for key in outputs) == sorted(
            key for key in reference if key.startswith("out_")
        )
        for key, value in outputs.items():
            assert_float32_close(keras.ops.convert_to_numpy(value), reference[f"out_{key}"], REDUCTION_LENGTH)
    else:
        # A SentenceEncoder file loads as keras-hub's TextEmbedder: one tensor,
        # the vectors the old `{"embedding"}` output held.
        stored = reference["out"] if "out" in reference else reference["out_embedding"]
        assert_float32_close(keras.ops.convert_to_numpy(outputs), stored, REDUCTION_LENGTH)


@pytest.mark.parametrize(
    "name, class_name",
    [
        ("compressed_roberta_backbone", "CompressedRobertaBackbone"),
        ("compressed_roberta_masked_lm", "CompressedRobertaMaskedLM"),
        # Retired in 0.3: the deprecated alias builds keras-hub's embedder.
        ("sentence_encoder", "BertTextEmbedder"),
        ("compressed_backbone", "CompressedBackbone"),
    ],
)
def test_legacy_file_loads_with_the_stored_outputs(name, class_name):
    model, reference = load(name)
    assert type(model).__name__ == class_name
    assert_outputs_equal(model, reference)


def test_legacy_weights_file_loads_into_a_model_built_from_its_config(tmp_path):
    # A 0.2.0 checkpoint (`.weights.h5`, as ModelCheckpoint writes) is the
    # weights part of a `.keras` file.
    with zipfile.ZipFile(LEGACY / "compressed_roberta_backbone.keras") as archive:
        config = json.loads(archive.read("config.json"))
        (tmp_path / "old.weights.h5").write_bytes(archive.read("model.weights.h5"))
    model = keras.saving.deserialize_keras_object(config)
    model.load_weights(tmp_path / "old.weights.h5")
    assert_outputs_equal(model, load("compressed_roberta_backbone")[1])


def test_legacy_compressed_roberta_backbone_keeps_its_embedding():
    model, _ = load("compressed_roberta_backbone")
    assert model.embedding_kind == "sub"
    assert model.token_embedding.output_dim == 8  # below hidden_dim=16: projected
    assert (model.hidden_dim, model.num_layers, model.max_sequence_length) == (16, 2, 32)
    assert model.vocabulary_size == 90  # make_legacy_files.VOCABULARY


def test_legacy_masked_lm_preprocessor_gives_the_stored_ids():
    model, reference = load("compressed_roberta_masked_lm")
    preprocessor = model.preprocessor
    sentences = [str(sentence) for sentence in reference["sentences"]]
    assert preprocessor.tokenizer.vocabulary_size() == model.backbone.vocabulary_size
    x, y, weights = preprocessor(sentences)
    x = {key: keras.ops.convert_to_numpy(value) for key, value in x.items()}
    assert sorted(x) == ["mask_positions", "padding_mask", "token_ids"]
    np.testing.assert_array_equal(x["padding_mask"], reference["padding_mask"])
    # Masking is random; every id outside the selected positions is the
    # tokenizer's, and the labels are the ids that were masked.
    unmasked = reference["unmasked_ids"]
    positions = x["mask_positions"]
    weights = keras.ops.convert_to_numpy(weights)
    kept = np.ones(unmasked.shape, bool)
    for row in range(len(positions)):
        kept[row, positions[row][weights[row] > 0]] = False
    np.testing.assert_array_equal(x["token_ids"][kept], unmasked[kept])
    labels = np.take_along_axis(unmasked, positions, axis=1)
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(y)[weights > 0], labels[weights > 0])


def test_legacy_sentence_encoder_embeds_raw_text_as_stored():
    model, reference = load("sentence_encoder")
    sentences = [str(sentence) for sentence in reference["sentences"]]
    vectors = model.predict(sentences, verbose=0)
    assert_float32_close(vectors, reference["sentence_embeddings"], REDUCTION_LENGTH)
