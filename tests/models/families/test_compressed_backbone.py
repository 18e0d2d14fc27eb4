import re
import subprocess
import sys
import textwrap
from pathlib import Path

import keras
import keras_hub
import numpy as np
import pytest

from keras_subembed.layers import ALONEEmbedding
from keras_subembed.layers import DeFINEEmbedding
from keras_subembed.layers import SubEmbedding
from keras_subembed.models import CompressedBackbone
from keras_subembed.models import CompressedRobertaBackbone
from keras_subembed.layers import PositionalTokenEmbedding
from keras_subembed.models import compress_backbone

ROOT = Path(__file__).parents[2]
VOCAB = 120
SIZES = dict(num_layers=2, num_heads=2, hidden_dim=16, intermediate_dim=32, max_sequence_length=24)
BACKBONES = {
    "bert": lambda: keras_hub.models.BertBackbone(VOCAB, **SIZES),
    "roberta": lambda: keras_hub.models.RobertaBackbone(VOCAB, **SIZES),
    "xlm_roberta": lambda: keras_hub.models.XLMRobertaBackbone(VOCAB, **SIZES),
    "distil_bert": lambda: keras_hub.models.DistilBertBackbone(VOCAB, **SIZES),
    "compressed_roberta": lambda: CompressedRobertaBackbone(
        VOCAB, embedding="sub", embedding_kwargs={"num_tables": 2, "seed": 0}, **SIZES),
}
SUB = {"num_tables": 2, "rows_per_table": 16, "reserved_ids": [0, 1, 2]}


def make_backbone(name):
    keras.utils.set_random_seed(7)
    return BACKBONES[name]()


def inputs_for(backbone, batch=2, length=9, seed=0):
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(3, VOCAB, (batch, length)).astype("int32")
    padding_mask = np.ones((batch, length), "int32")
    padding_mask[1, length // 2:] = 0  # a padded row
    inputs = {"token_ids": token_ids * padding_mask, "padding_mask": padding_mask}
    if "segment_ids" in backbone.input:
        inputs["segment_ids"] = np.zeros_like(token_ids)
    return inputs


def outputs_of(model, inputs):
    return [keras.ops.convert_to_numpy(x) for x in keras.tree.flatten(model(inputs))]


def non_embedding_weights(backbone):
    skipped = {id(weight) for weight in backbone.token_embedding.weights}
    return {w.path: keras.ops.convert_to_numpy(w) for w in backbone.weights if id(w) not in skipped}


@pytest.mark.parametrize("name", sorted(BACKBONES))
def test_dense_copy_reproduces_every_backbone_class(name):
    backbone = make_backbone(name)
    copy = compress_backbone(backbone, embedding="embedding")
    assert isinstance(copy, CompressedBackbone)
    assert list(copy.input) == list(backbone.input)
    inputs = inputs_for(backbone)
    for got, want in zip(outputs_of(copy, inputs), outputs_of(backbone, inputs), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(BACKBONES))
def test_sub_compression_copies_every_other_weight_exactly(name):
    backbone = make_backbone(name)
    compressed = compress_backbone(backbone, "sub", SUB)
    assert isinstance(compressed.token_embedding, SubEmbedding)
    assert compressed.token_embedding.assignment == "explicit"  # clustered codes
    source, target = non_embedding_weights(backbone), non_embedding_weights(compressed)
    # Keras' own dense layer and keras-hub's positions are nested differently in
    # RoBERTa-style models; the copy keeps their paths.
    assert source.keys() == target.keys() and len(source) > 10
    for path, value in source.items():
        np.testing.assert_array_equal(target[path], value, err_msg=path)
    # The configuration attributes task models read come along.
    for attribute in ("vocabulary_size", "hidden_dim", "num_layers"):
        assert getattr(compressed, attribute) == getattr(backbone, attribute)
    # The sub-tables start at the least-squares fit, closer to the table than zero.
    table = keras.ops.convert_to_numpy(backbone.token_embedding.embeddings) if not isinstance(
        backbone.token_embedding, SubEmbedding) else np.asarray(
        backbone.token_embedding.embedding_table())
    fitted = np.asarray(compressed.token_embedding.embedding_table())
    assert np.mean((fitted - table) ** 2) < np.mean(table ** 2)


def test_roberta_style_positions_stay_beside_the_new_embedding():
    backbone = make_backbone("roberta")
    compressed = compress_backbone(backbone, "sub", SUB)
    holder = compressed.get_layer("embeddings")
    assert isinstance(holder, PositionalTokenEmbedding)
    assert holder.token_embedding is compressed.token_embedding
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(holder.position_embedding.position_embeddings),
        keras.ops.convert_to_numpy(backbone.embeddings.position_embedding.position_embeddings))


@pytest.mark.parametrize(
    "embedding, kwargs, layer_class",
    [
        ("alone", {"seed": 1, "ffn_dim": 24}, ALONEEmbedding),
        ("define", {"map_dim": 8, "expand_dim": 32, "depth": 2}, DeFINEEmbedding),
        ("define", {"map_dim": 8, "expand_dim": 32, "depth": 2,
                    "map_layer": {"num_tables": 2, "rows_per_table": 12}}, DeFINEEmbedding),
    ],
)
def test_other_kinds_and_a_pretrained_define_map(embedding, kwargs, layer_class):
    backbone = make_backbone("bert")
    compressed = compress_backbone(backbone, embedding, kwargs)
    assert isinstance(compressed.token_embedding, layer_class)
    map_layer = getattr(compressed.token_embedding, "map_layer", None)
    if "map_layer" in kwargs:
        # The map is fitted to the table's principal components: its vectors
        # correlate with the table's top component.
        assert isinstance(map_layer, SubEmbedding) and map_layer.output_dim == 8
    inputs = inputs_for(backbone)
    assert outputs_of(compressed, inputs)[0].shape == outputs_of(backbone, inputs)[0].shape


def test_a_layer_instance_is_used_and_checked():
    backbone = make_backbone("distil_bert")
    layer = SubEmbedding(VOCAB, 16, num_tables=2, name="token_embedding")
    assert compress_backbone(backbone, layer).token_embedding is layer
    with pytest.raises(ValueError, match=re.escape(
            "The embedding layer maps 121 ids to width 16, but the pretrained token table "
            "is 120 x 16: the vocabulary and width must match the backbone's.")):
        compress_backbone(backbone, SubEmbedding(VOCAB + 1, 16, num_tables=2))
    with pytest.raises(ValueError, match=re.escape("`embedding_kwargs` only apply when")):
        compress_backbone(backbone, layer, {"num_tables": 3})


def test_unsupported_backbones_and_kinds_raise_naming_what_works():
    with pytest.raises(TypeError, match=re.escape(
            "`backbone` must be a keras-hub text encoder with a `token_embedding` layer. "
            "Received: backbone=<Functional")) as error:
        inputs = keras.Input((None,), dtype="int32")
        compress_backbone(keras.Model(inputs, keras.layers.Embedding(10, 4)(inputs)))
    assert "(a Functional). Supported: BertBackbone, RobertaBackbone" in str(error.value)
    with pytest.raises(TypeError, match=re.escape(
            "Received: backbone=None (a NoneType). Supported: BertBackbone")):
        compress_backbone(None)
    with pytest.raises(TypeError, match=re.escape(
            "`embedding_kwargs` must be a dict of the embedding's arguments or None. "
            "Received: embedding_kwargs=[1, 2]")):
        compress_backbone(make_backbone("bert"), "sub", [1, 2])
    with pytest.raises(ValueError, match=re.escape(
            "`embedding` must be a layer or one of ['alone', 'define', 'embedding', 'split', 'sub']. "
            "Received: embedding='hashing'")):
        compress_backbone(make_backbone("bert"), "hashing")
    # A decoder: its token embedding is a layer, but its layers cannot be rebuilt.
    gemma = keras_hub.models.GemmaBackbone(
        vocabulary_size=50, num_layers=1, num_query_heads=2, num_key_value_heads=1,
        hidden_dim=16, intermediate_dim=32, head_dim=8)
    with pytest.raises(TypeError, match=re.escape(
            "Cannot compress a GemmaBackbone: it is not a supported text encoder (its layers "
            "cannot be copied: NotImplementedError: Object RMSNormalization was created")) as error:
        compress_backbone(gemma, "sub", SUB)
    assert "Supported: BertBackbone, RobertaBackbone" in str(error.value)


def test_keras_hub_task_models_take_the_compressed_backbone(tmp_path):
    backbone = compress_backbone(make_backbone("bert"), "sub", SUB)
    classifier = keras_hub.models.BertTextClassifier(backbone, num_classes=3, preprocessor=None)
    inputs = inputs_for(backbone)
    logits = keras.ops.convert_to_numpy(classifier.predict(inputs, verbose=0))
    assert logits.shape == (2, 3)
    classifier.save(tmp_path / "classifier.keras")
    loaded = keras.saving.load_model(tmp_path / "classifier.keras")
    np.testing.assert_allclose(loaded.predict(inputs, verbose=0), logits, rtol=1e-6, atol=1e-6)


def test_from_backbone_is_the_same_conversion():
    roberta = make_backbone("roberta")
    compressed = CompressedRobertaBackbone.from_backbone(roberta, "sub", SUB)
    generic = compress_backbone(roberta, "sub", SUB)
    np.testing.assert_array_equal(
        np.asarray(compressed.token_embedding.embedding_table()),
        np.asarray(generic.token_embedding.embedding_table()))
    inputs = inputs_for(roberta)
    np.testing.assert_allclose(outputs_of(compressed, inputs)[0], outputs_of(generic, inputs)[0],
                               rtol=1e-5, atol=1e-5)


def test_saves_and_loads_in_a_fresh_process_with_identical_outputs(tmp_path):
    backbones = {name: compress_backbone(make_backbone(name), "sub", SUB)
                 for name in ("bert", "roberta", "distil_bert")}
    for name, backbone in backbones.items():
        backbone.save(tmp_path / f"{name}.keras")
        inputs = inputs_for(backbone)
        np.savez(tmp_path / f"{name}.npz", *outputs_of(backbone, inputs), **{
            f"input_{k}": v for k, v in inputs.items()})
    script = textwrap.dedent(
        f"""
        import sys; sys.path.insert(0, {str(ROOT)!r})
        import keras, numpy as np
        import keras_subembed.models
        for name in {sorted(backbones)!r}:
            model = keras.saving.load_model({str(tmp_path)!r} + f"/{{name}}.keras")
            saved = np.load({str(tmp_path)!r} + f"/{{name}}.npz")
            inputs = {{k[len("input_"):]: saved[k] for k in saved.files if k.startswith("input_")}}
            outputs = [keras.ops.convert_to_numpy(x) for x in keras.tree.flatten(model(inputs))]
            for index, value in enumerate(outputs):
                np.testing.assert_array_equal(value, saved[f"arr_{{index}}"])
            expected = "CompressedBertBackbone" if name == "bert" else "CompressedBackbone"
            assert type(model).__name__ == expected, (name, type(model))
        print("OK")
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0 and "OK" in result.stdout, result.stderr[-3000:]


def test_a_student_of_a_frozen_teacher_is_trainable():
    teacher = make_backbone("roberta")
    expected = len(compress_backbone(teacher, "sub", SUB).trainable_weights)
    teacher.trainable = False
    student = compress_backbone(teacher, "sub", SUB)
    assert student.trainable and all(layer.trainable for layer in student._flatten_layers())
    # Every weight but the stored codes, as from a teacher that was never frozen.
    assert len(student.trainable_weights) == expected == len(student.weights) - 1
    assert not teacher.trainable_weights  # the teacher stays as it was
