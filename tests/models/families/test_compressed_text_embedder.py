"""keras-hub TextEmbedders in and out of `keras_subembed.compress`, and their presets."""

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import keras
import keras_hub
import numpy as np
import pytest

import keras_subembed
from keras_subembed.layers import SubEmbedding
from keras_subembed.models import CompressedBackbone
from keras_subembed.models import CompressedBertBackbone
from keras_subembed.models import CompressedBertTextEmbedder
from keras_subembed.models import CompressedXLMRobertaTextEmbedder
from keras_subembed.models.files.model_files import record_model_sequence_length

ROOT = Path(__file__).parents[2]
VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + (
    "the of to and in is was for on that with by it as at from he his said "
    "year new one two people news game team police government market world "
    "cafe naive road closed city rain").split()
SIZES = dict(num_layers=2, num_heads=2, hidden_dim=16, intermediate_dim=32,
             max_sequence_length=24)
SUB = {"assignment": "product", "num_tables": 4, "rows_per_table": 8,
       "reserved_ids": [0, 1, 2, 3, 4]}
TEXTS = ["the police said the road was closed", "rain in the city", "one new game"]


def make_bert_embedder(pooling_mode="mean", normalize=True):
    keras.utils.set_random_seed(3)
    backbone = keras_hub.models.BertBackbone(len(VOCABULARY), **SIZES)
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=VOCABULARY)
    preprocessor = keras_hub.models.BertTextEmbedderPreprocessor(tokenizer, sequence_length=12)
    return keras_hub.models.BertTextEmbedder(
        backbone, preprocessor, pooling_mode=pooling_mode, normalize=normalize)


def make_xlm_roberta_embedder():
    keras.utils.set_random_seed(4)
    backbone = keras_hub.models.XLMRobertaBackbone(len(VOCABULARY), **SIZES)
    return keras_hub.models.XLMRobertaTextEmbedder(backbone, pooling_mode="cls")


def ids(batch=3, length=10, seed=0, segment_ids=True):
    rng = np.random.default_rng(seed)
    padding_mask = np.ones((batch, length), "int32")
    padding_mask[1, 4:] = 0
    inputs = {"token_ids": rng.integers(5, len(VOCABULARY), (batch, length)).astype("int32")
              * padding_mask, "padding_mask": padding_mask}
    if segment_ids:
        inputs["segment_ids"] = np.zeros((batch, length), "int32")
    return inputs


def as_numpy(x):
    return keras.ops.convert_to_numpy(x)


@pytest.mark.parametrize("pooling_mode", ["mean", "cls", "max"])
def test_a_dense_copy_of_a_bert_text_embedder_gives_its_vectors(pooling_mode):
    embedder = make_bert_embedder(pooling_mode)
    copy = keras_subembed.compress(embedder, "embedding")
    assert type(copy) is CompressedBertTextEmbedder
    assert isinstance(copy, keras_hub.models.BertTextEmbedder)
    assert isinstance(copy.backbone, CompressedBertBackbone)
    assert copy.preprocessor is embedder.preprocessor
    assert (copy.pooling_mode, copy.normalize) == (pooling_mode, True)
    expected = as_numpy(embedder.encode_text(TEXTS, verbose=0))
    np.testing.assert_allclose(as_numpy(copy.encode_text(TEXTS, verbose=0)), expected,
                               atol=1e-5)
    # Token ids go straight in, preprocessor or not.
    np.testing.assert_allclose(as_numpy(copy.predict(ids(), verbose=0)),
                               as_numpy(embedder(ids())), atol=1e-5)


def test_an_xlm_roberta_text_embedder_comes_back_as_one():
    embedder = make_xlm_roberta_embedder()
    copy = keras_subembed.compress(embedder, "embedding")
    assert type(copy) is CompressedXLMRobertaTextEmbedder and copy.pooling_mode == "cls"
    inputs = ids(segment_ids=False)
    np.testing.assert_allclose(as_numpy(copy(inputs)), as_numpy(embedder(inputs)), atol=1e-5)
    small = keras_subembed.compress(embedder, "sub", SUB)
    assert isinstance(small.backbone.token_embedding, SubEmbedding)


def test_a_compressed_embedder_keeps_every_other_weight_and_compresses_again():
    embedder = make_bert_embedder()
    small = keras_subembed.compress(embedder, "sub", SUB)
    assert isinstance(small.backbone.token_embedding, SubEmbedding)
    assert small.backbone.token_embedding.num_tables == 4
    vectors = as_numpy(small.encode_text(TEXTS, verbose=0))
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=-1), 1.0, rtol=1e-5)
    again = keras_subembed.compress(small, "embedding")
    assert type(again) is CompressedBertTextEmbedder
    np.testing.assert_allclose(as_numpy(again.encode_text(TEXTS, verbose=0)), vectors, atol=1e-5)


def test_backbones_come_back_as_compressed_backbones():
    keras.utils.set_random_seed(1)
    bert = keras_subembed.compress(keras_hub.models.BertBackbone(len(VOCABULARY), **SIZES), "sub", SUB)
    roberta = keras_subembed.compress(
        keras_hub.models.RobertaBackbone(len(VOCABULARY), **SIZES), "sub", SUB)
    assert type(bert) is CompressedBertBackbone and type(roberta) is CompressedBackbone


def test_what_cannot_be_compressed_is_named():
    with pytest.raises(TypeError, match=re.escape(
            "`model` must be a keras-hub TextEmbedder (e.g. BertTextEmbedder) or a text-encoder "
            "Backbone (e.g. BertBackbone). Received: model='a model'")):
        keras_subembed.compress("a model")

    class OtherEmbedder(keras_hub.models.TextEmbedder):
        pass

    embedder = make_bert_embedder()
    other = OtherEmbedder(inputs=embedder.input, outputs=embedder.output)
    with pytest.raises(TypeError, match=re.escape(
            "Cannot compress a OtherEmbedder: supported TextEmbedders are BertTextEmbedder, "
            "XLMRobertaTextEmbedder")):
        keras_subembed.compress(other)


def test_a_compressed_embedder_names_bad_input_before_tracing():
    small = keras_subembed.compress(make_bert_embedder(), "sub", SUB)
    bad = ids()
    bad["token_ids"][0, 0] = len(VOCABULARY) + 3
    with pytest.raises(ValueError, match=re.escape(
            f"`token_ids` must be in [0, {len(VOCABULARY)}) (the vocabulary size). "
            f"Received ids: [{len(VOCABULARY) + 3}]")):
        small.predict(bad, verbose=0)
    with pytest.raises(TypeError, match="`x` must hold sentences"):
        small.predict([1, 2], verbose=0)
    small.preprocessor.sequence_length = 30  # beyond the 24 positions the model has
    with pytest.raises(ValueError, match=re.escape(
            "The preprocessor pads text to 30 tokens; the model takes at most 24 (its "
            "`max_sequence_length`)")):
        small.encode_text(TEXTS, verbose=0)


def test_a_preset_loads_back_through_keras_hub_in_a_fresh_process(tmp_path):
    # Data-aware codes, row scales and a shortened position table come back too.
    data_aware = {**SUB, "token_weights": np.arange(len(VOCABULARY)) + 1.0, "row_scales": True}
    small = keras_subembed.compress(make_bert_embedder("max"), "sub", data_aware,
                                    max_sequence_length=12)
    small.save_to_preset(str(tmp_path / "preset"))
    np.save(tmp_path / "vectors.npy", as_numpy(small.encode_text(TEXTS, verbose=0)))
    script = textwrap.dedent(
        f"""
        import sys; sys.path.insert(0, {str(ROOT)!r})
        import keras_hub, numpy as np
        import keras_subembed  # registers the compressed classes with Keras
        expected = np.load({str(tmp_path / "vectors.npy")!r})
        for door in (keras_hub.models.TextEmbedder, keras_hub.models.BertTextEmbedder):
            model = door.from_preset({str(tmp_path / "preset")!r})
            assert type(model).__name__ == "CompressedBertTextEmbedder", type(model)
            assert model.pooling_mode == "max", model.pooling_mode
            assert type(model.backbone.token_embedding).__name__ == "SubEmbedding"
            assert model.backbone.token_embedding.row_scales
            assert model.backbone.max_sequence_length == 12
            vectors = np.asarray(model.encode_text({TEXTS!r}, verbose=0))
            np.testing.assert_array_equal(vectors, expected)
        print("OK")
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0 and "OK" in result.stdout, result.stderr[-3000:]


def test_what_predict_cannot_take_is_named_not_guessed():
    small = keras_subembed.compress(make_bert_embedder(), "embedding")
    inputs = ids()
    # Keras pairs dict entries with inputs by sorted name: an extra key would
    # silently hand a model input another entry's values.
    with pytest.raises(ValueError, match=re.escape(
            "The model takes inputs ['padding_mask', 'segment_ids', 'token_ids']; "
            "received unknown ones ['foo']")):
        small.predict({**inputs, "foo": inputs["token_ids"]}, verbose=0)
    with pytest.raises(ValueError, match=re.escape(
            "`token_ids` must be a 2-D (batch, length) array. Received shape (1, 1, 10)")):
        small.predict({name: value[None, :1] for name, value in inputs.items()}, verbose=0)
    with pytest.raises(TypeError, match=re.escape(
            "`x` holds arrays of numbers: token ids go in a dict {'token_ids', 'padding_mask'}")):
        small.predict((inputs["token_ids"], inputs["padding_mask"]), verbose=0)
    # One sentence is taken as encode_text takes it.
    np.testing.assert_allclose(np.asarray(small.predict(TEXTS[0], verbose=0)),
                               np.asarray(small.encode_text(TEXTS[0], verbose=0)), atol=1e-6)


def test_preset_metadata_names_keras_hubs_task():
    import json

    small = keras_subembed.compress(make_bert_embedder(), "sub", SUB)
    assert CompressedBertTextEmbedder.__base__ is keras_hub.models.BertTextEmbedder
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        small.save_to_preset(folder)
        with open(f"{folder}/metadata.json") as file:
            assert json.load(file)["tasks"] == ["BertTextEmbedder"]


def read_preprocessor_length(folder):
    import json

    config = json.loads((Path(folder) / "preprocessor.json").read_text())
    return config["config"]["sequence_length"]


def test_save_to_preset_never_replaces_a_users_files(tmp_path, monkeypatch):
    small = keras_subembed.compress(make_bert_embedder(), "sub", SUB)
    # A Hugging Face model folder (the teacher's own), a user's Keras files.
    hugging_face = tmp_path / "teacher"
    hugging_face.mkdir()
    (hugging_face / "config.json").write_text('{"model_type": "bert"}')
    (hugging_face / "tokenizer.json").write_text('{"normalizer": null}')
    users = tmp_path / "mine"
    users.mkdir()
    (users / "config.json").write_text("{}")
    (users / "model.weights.h5").write_bytes(b"my weights")
    for folder in (hugging_face, users):
        before = {path.name: path.read_bytes() for path in folder.iterdir()}
        for model in (small, small.backbone):
            for overwrite in (False, True):
                with pytest.raises(FileExistsError, match=re.escape(
                        f"{str(folder)!r} holds files this package did not write "
                        f"({', '.join(sorted(before))}): a preset never replaces them, "
                        "overwrite=True included")):
                    model.save_to_preset(str(folder), overwrite=overwrite)
        assert {path.name: path.read_bytes() for path in folder.iterdir()} == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["mine", "teacher"]  # no staging left
    # Our own preset: replaced only with overwrite=True; an empty folder is free.
    ours = tmp_path / "ours"
    ours.mkdir()
    small.save_to_preset(str(ours))
    with pytest.raises(FileExistsError, match="holds a preset; pass overwrite=True to replace it"):
        small.save_to_preset(str(ours))
    small.save_to_preset(str(ours), overwrite=True)
    assert type(keras_hub.models.TextEmbedder.from_preset(str(ours))) is CompressedBertTextEmbedder
    # ... but not once a file of the user's is in it.
    (ours / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="notes.txt"):
        small.save_to_preset(str(ours), overwrite=True)
    assert (ours / "notes.txt").read_text() == "mine"
    # A link is never followed; the current folder (even empty) is never replaced.
    (tmp_path / "link").symlink_to(users)
    with pytest.raises(FileExistsError, match="is a link; a preset replaces only a folder it wrote"):
        small.save_to_preset(str(tmp_path / "link"), overwrite=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    with pytest.raises(ValueError, match=re.escape(
            "'.' is the current folder or one of its parents; give a new folder name for the "
            "preset.")):
        small.save_to_preset(".")
    assert empty.is_dir() and not any(empty.iterdir())


def test_a_preset_keeps_the_models_own_sequence_length(tmp_path):
    small = keras_subembed.compress(make_bert_embedder(), "sub", SUB)  # built at 12 tokens
    small.preprocessor.sequence_length = 6  # an evaluation's length
    small.save_to_preset(str(tmp_path / "own"))
    assert read_preprocessor_length(tmp_path / "own") == 12
    assert small.preprocessor.sequence_length == 6  # the live model is left as it was
    small.save_to_preset(str(tmp_path / "asked"), sequence_length=8)
    assert read_preprocessor_length(tmp_path / "asked") == 8
    with pytest.raises(ValueError, match=r"`sequence_length` must be at most the model's limit "
                       r"of 24 tokens. Received: sequence_length=100"):
        small.save_to_preset(str(tmp_path / "long"), sequence_length=100)
    # keras-hub's own embedders save the same way through `save_preset`.
    teacher = make_bert_embedder()
    teacher.preprocessor.sequence_length = 6
    keras_subembed.models.save_preset(teacher, tmp_path / "teacher", sequence_length=12)
    assert read_preprocessor_length(tmp_path / "teacher") == 12
    with pytest.raises(TypeError, match=re.escape(
            "`model` must be a keras-hub Task (e.g. a TextEmbedder) or Backbone")):
        keras_subembed.models.save_preset(keras.Sequential(), tmp_path / "plain")
    # A model compressed to fewer positions saves no longer a length than it reads
    # (match_model_files recorded 12 for the model it read).
    teacher = make_bert_embedder()
    record_model_sequence_length(teacher.preprocessor, 12)
    teacher.preprocessor.sequence_length = 8
    shorter = keras_subembed.compress(teacher, "embedding", max_sequence_length=8)
    shorter.save_to_preset(str(tmp_path / "shorter"))
    assert read_preprocessor_length(tmp_path / "shorter") == 8


def test_a_preset_whose_vocabulary_outgrows_the_embedding_is_refused_at_encode(tmp_path):
    small = keras_subembed.compress(make_bert_embedder(), "sub", SUB)
    small.save_to_preset(str(tmp_path / "preset"))
    with open(tmp_path / "preset" / "assets" / "tokenizer" / "vocabulary.txt", "a") as file:
        file.write("extra\nwords\n")
    loaded = keras_hub.models.TextEmbedder.from_preset(str(tmp_path / "preset"))
    size = len(VOCABULARY)
    with pytest.raises(ValueError, match=re.escape(
            f"The tokenizer's vocabulary has {size + 2} tokens, but the token embedding takes "
            f"ids below {size} (its `input_dim`): text would give ids {size}..{size + 1}")):
        loaded.encode_text(["extra words"], verbose=0)
    # Ids known to fit still go in.
    assert loaded.predict(ids(), verbose=0).shape == (3, 16)


@pytest.mark.parametrize("key, value", [("rows_per_table", 16), ("num_tables", 2),
                                        ("pack_codes", False)])
def test_an_edited_preset_config_names_the_shapes_that_differ(key, value, tmp_path):
    import json

    small = keras_subembed.compress(make_bert_embedder(), "sub", SUB)
    small.save_to_preset(str(tmp_path / "preset"))
    for name in ("config.json", "task.json"):
        path = tmp_path / "preset" / name
        config = json.loads(path.read_text())
        backbone = config["config"] if name == "config.json" else config["config"]["backbone"]["config"]
        backbone["token_embedding"]["config"][key] = value
        path.write_text(json.dumps(config))
    for door in (keras_hub.models.Backbone, keras_hub.models.TextEmbedder):
        with pytest.raises(ValueError, match=r"does not fit the model its config describes: the "
                           r"token embedding 'token_embedding' \(SubEmbedding, .*\) needs weights "
                           r"sub_table_0 .*; the file holds \(8, 4\), \(8, 4\), \(8, 4\), \(8, 4\), "
                           r"\(42, 2\)\. Was the preset's config.json or task.json edited\?"):
            door.from_preset(str(tmp_path / "preset"))


def test_a_preset_without_its_weights_file_names_it(tmp_path):
    small = keras_subembed.compress(make_bert_embedder(), "sub", SUB)
    small.save_to_preset(str(tmp_path / "preset"))
    (tmp_path / "preset" / "model.weights.h5").unlink()
    for door in (CompressedBertBackbone, CompressedBertTextEmbedder, CompressedBackbone):
        with pytest.raises(FileNotFoundError, match=re.escape(
                f"The preset {str(tmp_path / 'preset')!r} has no weights: model.weights.h5 is "
                "missing (nor is it sharded: no model.weights.json).")):
            door.from_preset(str(tmp_path / "preset"))
    # keras-hub's own doors name the file they looked for last.
    for door in (keras_hub.models.Backbone, keras_hub.models.TextEmbedder):
        with pytest.raises(FileNotFoundError, match=r"model\.weights\.json"):
            door.from_preset(str(tmp_path / "preset"))
    with pytest.raises(ValueError, match=r"`load_weights` must be a bool.*load_weights='False'"):
        CompressedBertTextEmbedder.from_preset(str(tmp_path / "preset"), load_weights="False")


def test_a_preset_whose_vocabulary_was_replaced_is_refused_at_encode(tmp_path):
    small = keras_subembed.compress(make_bert_embedder(), "sub", SUB)
    small.save_to_preset(str(tmp_path / "preset"))
    path = tmp_path / "preset" / "assets" / "tokenizer" / "vocabulary.txt"
    tokens = path.read_text().splitlines()
    path.write_text("\n".join(tokens[:5] + tokens[5:][::-1]) + "\n")  # same size, other order
    loaded = keras_hub.models.TextEmbedder.from_preset(str(tmp_path / "preset"))
    with pytest.raises(ValueError, match=r"The tokenizer's vocabulary \(sha256 \w+\) is not the "
                       r"one this model was saved with \(sha256 \w+\)"):
        loaded.encode_text(TEXTS, verbose=0)
    path.write_text("\n".join(tokens) + "\n")
    np.testing.assert_allclose(
        np.asarray(keras_hub.models.TextEmbedder.from_preset(str(tmp_path / "preset")).encode_text(
            TEXTS, verbose=0)), np.asarray(small.encode_text(TEXTS, verbose=0)), atol=1e-6)


@pytest.mark.parametrize("make", [make_bert_embedder, make_xlm_roberta_embedder])
def test_max_sequence_length_keeps_the_first_positions(make):
    embedder = make()
    if embedder.preprocessor is not None:
        embedder.preprocessor.sequence_length = 10
    small = keras_subembed.compress(embedder, "embedding", max_sequence_length=10)
    assert small.backbone.max_sequence_length == 10
    position = small.backbone.get_layer(
        "embeddings" if make is make_xlm_roberta_embedder else "position_embedding")
    table = [w for w in small.backbone.weights if "position_embedding/" in w.path][0]
    source = [w for w in embedder.backbone.weights if "position_embedding/" in w.path][0]
    assert position is not None and tuple(table.shape)[0] == 10
    np.testing.assert_array_equal(as_numpy(table), as_numpy(source)[:10])
    # A dense copy with the first 10 positions gives the original's vectors.
    inputs = ids(length=10, segment_ids=make is make_bert_embedder)
    np.testing.assert_allclose(as_numpy(small(inputs)), as_numpy(embedder(inputs)), atol=1e-6)


def test_max_sequence_length_is_checked():
    embedder = make_bert_embedder()
    with pytest.raises(ValueError, match=r"position table has 24 rows. Received: max_sequence_length=30"):
        keras_subembed.compress(embedder.backbone, "embedding", max_sequence_length=30)
    with pytest.raises(ValueError, match=r"`max_sequence_length` must be a positive integer"):
        keras_subembed.compress(embedder.backbone, "embedding", max_sequence_length=0)
    with pytest.raises(ValueError, match=r"preprocessor packs 12 tokens, more than `max_sequence_length=8`"):
        keras_subembed.compress(embedder, "embedding", max_sequence_length=8)


# --- issue 32 -------------------------------------------------------------------------


def test_fractional_and_string_ids_are_refused_not_truncated():  # items 7 and 19
    small = keras_subembed.compress(make_bert_embedder(), "sub", SUB)
    inputs = ids()
    fractional = {**inputs, "token_ids": inputs["token_ids"].astype("float64")}
    fractional["token_ids"][0, 2] = 6.9
    for run in (lambda x: small.predict(x, verbose=0), small):
        with pytest.raises(ValueError, match=re.escape(
                "`token_ids` must hold whole-number token ids: a fractional id is not an id "
                "(it would silently be truncated to another token). Received: [6.9]")):
            run(fractional)
    words = {**inputs, "token_ids": np.full((3, 10), "the")}
    with pytest.raises(TypeError, match=re.escape(
            "`token_ids` must hold integer token ids (any integer or float dtype). "
            "Received: token_ids of dtype <U3")):
        small.predict(words, verbose=0)
    # A compiled graph cannot raise: the fractional id embeds as an unknown id
    # (the zero vector, as -1 does), never as token 6.
    import tensorflow as tf

    if keras.backend.backend() == "tensorflow":
        run = tf.function(small)
        unknown = {**inputs, "token_ids": inputs["token_ids"].copy()}
        unknown["token_ids"][0, 2] = -1
        six = {**inputs, "token_ids": inputs["token_ids"].copy()}
        six["token_ids"][0, 2] = 6
        got = as_numpy(run({k: tf.constant(v) for k, v in fractional.items()}))
        np.testing.assert_allclose(got, as_numpy(run(unknown)), atol=1e-6)
        assert np.abs(got[0] - as_numpy(run(six))[0]).max() > 1e-4


def test_a_raised_preprocessor_length_is_saved(tmp_path):  # item 8
    small = keras_subembed.compress(make_bert_embedder(), "sub", SUB)  # built at 12 tokens
    small.preprocessor.sequence_length = 20  # raised, within the 24 positions
    small.save_to_preset(str(tmp_path / "raised"))
    assert read_preprocessor_length(tmp_path / "raised") == 20
    loaded = keras_hub.models.TextEmbedder.from_preset(str(tmp_path / "raised"))
    assert loaded.preprocessor.sequence_length == 20


def test_overwrite_never_deletes_a_users_nested_file(tmp_path):  # item 11
    small = keras_subembed.compress(make_bert_embedder(), "sub", SUB)
    ours = tmp_path / "ours"
    small.save_to_preset(str(ours))
    mine = ours / "assets" / "tokenizer" / "my_notes.txt"
    mine.write_text("mine")
    with pytest.raises(FileExistsError, match=re.escape(
            f"{str(ours)!r} holds files this package did not write "
            "(assets/tokenizer/my_notes.txt): a preset never replaces them")):
        small.save_to_preset(str(ours), overwrite=True)
    assert mine.read_text() == "mine"
    mine.unlink()
    small.save_to_preset(str(ours), overwrite=True)  # ours alone again: replaced


def test_overwrite_must_be_a_bool(tmp_path):  # item 12
    small = keras_subembed.compress(make_bert_embedder(), "sub", SUB)
    small.save_to_preset(str(tmp_path / "ours"))
    before = (tmp_path / "ours" / "model.weights.h5").read_bytes()
    for save in (small.save_to_preset, small.backbone.save_to_preset,
                 lambda path, **kw: keras_subembed.models.save_preset(small, path, **kw)):
        with pytest.raises(ValueError, match=re.escape(
                "`overwrite` must be a bool. Received: overwrite='False'")):
            save(str(tmp_path / "ours"), overwrite="False")
    assert (tmp_path / "ours" / "model.weights.h5").read_bytes() == before


@pytest.mark.parametrize("bad", [0, -3, True, 8.0])
def test_compress_checks_max_sequence_length(bad):  # item 17
    with pytest.raises(ValueError, match=re.escape(
            f"`max_sequence_length` must be a positive integer. "
            f"Received: max_sequence_length={bad!r}")):
        keras_subembed.compress(make_bert_embedder(), "embedding", max_sequence_length=bad)
