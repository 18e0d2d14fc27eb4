"""Issue 14, layer side: the kind registry, capabilities, the base build(), configs, docs."""

import json
import re
import zipfile

import keras
import numpy as np
import pytest
from keras import ops

from keras_subembed.layers import ALONEEmbedding
from keras_subembed.layers import CompressedEmbedding
from keras_subembed.layers import DeFINEEmbedding
from keras_subembed.layers import EMBEDDING_KINDS
from keras_subembed.layers import SubEmbedding
from keras_subembed.layers import embedding_kind_name
from keras_subembed.layers import embedding_kinds
from keras_subembed.layers import make_embedding
from keras_subembed.layers import make_pretrained_embedding
from keras_subembed.assignment import reconstruction_quality
from keras_subembed.layers import register_embedding_kind

# --- registry and capabilities -----------------------------------------------------


def test_registry_holds_the_package_kinds_with_their_capabilities():
    classes = {name: kind.cls for name, kind in EMBEDDING_KINDS.items()}
    assert {name: classes[name] for name in ("sub", "alone", "define")} == {
        "sub": SubEmbedding, "alone": ALONEEmbedding, "define": DeFINEEmbedding}
    assert [SubEmbedding.freeze_speeds_up, ALONEEmbedding.freeze_speeds_up,
            DeFINEEmbedding.freeze_speeds_up] == [False, True, True]
    assert [SubEmbedding.tied_to_table, ALONEEmbedding.tied_to_table,
            DeFINEEmbedding.tied_to_table] == [True, True, False]


def test_registering_a_kind_with_defaults_and_making_it():
    class Dense(keras.layers.Embedding):
        pass

    try:
        register_embedding_kind("test_dense", Dense, {"output_dim": 4})
        register_embedding_kind("test_dense", Dense, {"output_dim": 4})  # idempotent
        layer = make_embedding("test_dense", input_dim=10)
        assert isinstance(layer, Dense) and layer.output_dim == 4
        assert make_embedding("test_dense", input_dim=10, output_dim=6).output_dim == 6
        assert embedding_kind_name(layer) == "test_dense"
        with pytest.raises(ValueError, match="'test_dense' is already registered as Dense"):
            register_embedding_kind("test_dense", Dense, {"output_dim": 5})
        with pytest.raises(ValueError, match="must be a keras.layers.Layer subclass"):
            register_embedding_kind("x", object)
        with pytest.raises(TypeError):  # the registry is read-only; registering adds
            EMBEDDING_KINDS["test_dense"] = EMBEDDING_KINDS["sub"]
    finally:
        embedding_kinds._EMBEDDING_KINDS.pop("test_dense", None)
    with pytest.raises(ValueError, match=r"Unknown embedding kind 'hashing'. Registered kinds: \["):
        make_embedding("hashing", input_dim=10)
    assert embedding_kind_name(keras.layers.Dense(3)) is None


# --- the base class owns build() --------------------------------------------------------


@keras.saving.register_keras_serializable(package="keras_subembed_tests")
class ScaledRows(CompressedEmbedding):
    """A minimal kind: defines only build_weights, embed and logits."""

    def build_weights(self, input_shape=None):
        self.table = self.add_weight(name="table", shape=(self.input_dim, self.output_dim))

    def embed(self, token_ids, training=None):
        return 2.0 * ops.take(self.table, token_ids, axis=0)

    def logits(self, hidden):
        return ops.matmul(hidden, ops.transpose(2.0 * self.table))


def test_a_subclass_with_only_build_weights_gets_cache_and_reloads_frozen(tmp_path):
    layer = ScaledRows(20, 4)
    ids = keras.Input((None,), dtype="int32")
    model = keras.Model(ids, layer(ids))
    assert layer.built and layer.cached_table is None
    layer.freeze()
    path = tmp_path / "frozen.keras"
    model.save(path)
    reloaded = keras.saving.load_model(path)
    clone = reloaded.layers[-1]
    assert clone.cached and clone.built and clone.cached_table is not None
    np.testing.assert_array_equal(clone.cached_table, layer.cached_table)
    batch = np.array([[0, 3, 19]])
    np.testing.assert_array_equal(reloaded(batch), model(batch))


# --- configs carry no weight-sized data --------------------------------------------------


def explicit_layer():
    codes = np.stack([np.arange(30) % 6, np.arange(30) // 6], axis=1)[::-1].copy()
    return SubEmbedding(30, 8, assignment=codes, reserved_ids=(), name="sub"), codes


def test_explicit_codes_stay_out_of_the_config_and_come_back_with_the_weights(tmp_path):
    layer, codes = explicit_layer()
    config = layer.get_config()
    assert config["assignment"] == "explicit"
    assert (config["num_tables"], config["rows_per_table"]) == (2, 6)
    assert len(json.dumps(config)) < 1500
    ids = keras.Input((None,), dtype="int32")
    model = keras.Model(ids, layer(ids))
    model.save(tmp_path / "m.keras")
    reloaded = keras.saving.load_model(tmp_path / "m.keras")
    np.testing.assert_array_equal(reloaded.layers[-1].code_array(), codes)
    batch = np.arange(30)[None]
    np.testing.assert_array_equal(reloaded(batch), model(batch))


def test_a_config_alone_cannot_silently_use_zero_codes():
    layer, _ = explicit_layer()
    layer.build()
    clone = SubEmbedding.from_config(layer.get_config())
    with pytest.raises(ValueError, match="assignment='explicit' but its codes were never loaded"):
        clone(np.array([1, 2]))
    clone.set_weights(layer.get_weights())
    np.testing.assert_array_equal(clone(np.arange(30)), layer(np.arange(30)))


def test_a_models_set_weights_is_named_as_not_loading_the_codes():
    # keras.Model.set_weights assigns each variable without calling the layer's
    # set_weights, so the layer cannot tell its codes arrived: the error says so.
    layer, _ = explicit_layer()
    ids = keras.Input((None,), dtype="int32")
    model = keras.Model(ids, layer(ids))
    clone = keras.Model.from_config(model.get_config())
    clone.set_weights(model.get_weights())
    with pytest.raises(ValueError, match=re.escape(
            "this layer's own `set_weights`: a model's `set_weights` assigns the variables")):
        clone(np.array([[1, 2]]))
    clone.layers[-1].set_weights(layer.get_weights())
    np.testing.assert_array_equal(clone(np.arange(30)[None]), model(np.arange(30)[None]))


def test_old_keras_files_with_codes_in_the_config_still_load(tmp_path):
    codes = explicit_layer()[1]
    # Older releases stored (V, K) codes unpacked and had no packing options.
    layer = SubEmbedding(30, 8, assignment=codes, pack_codes=False, name="sub")
    ids = keras.Input((None,), dtype="int32")
    model = keras.Model(ids, layer(ids))
    model.save(tmp_path / "new.keras")
    # Rewrite the file as the previous version wrote it: the codes as a list.
    with zipfile.ZipFile(tmp_path / "new.keras") as source:
        members = {name: source.read(name) for name in source.namelist()}
    config = json.loads(members["config.json"])
    (sub_config,) = [item for item in config["config"]["layers"] if item["class_name"] == "SubEmbedding"]
    sub_config["config"]["assignment"] = codes.tolist()
    del sub_config["config"]["pack_codes"], sub_config["config"]["distinct_codes"]
    members["config.json"] = json.dumps(config).encode()
    with zipfile.ZipFile(tmp_path / "old.keras", "w") as target:
        for name, data in members.items():
            target.writestr(name, data)
    reloaded = keras.saving.load_model(tmp_path / "old.keras")
    np.testing.assert_array_equal(reloaded.layers[-1].codes, codes)
    batch = np.arange(30)[None]
    np.testing.assert_array_equal(reloaded(batch), model(batch))
    assert reloaded.layers[-1].get_config()["assignment"] == "explicit"


def test_explicit_assignment_needs_its_shape():
    with pytest.raises(ValueError, match='`assignment="explicit"`.*needs `num_tables` and `rows_per_table`'):
        SubEmbedding(30, 8, assignment="explicit")


# --- names -------------------------------------------------------------------------------


def test_filter_kind_is_the_name_and_filter_is_gone():
    layer = ALONEEmbedding(50, 8, filter_kind="real", seed=1)
    config = layer.get_config()
    assert config["filter_kind"] == "real" and "filter" not in config
    # The 0.2 name was removed in 0.3.0: Keras refuses it as an unknown argument.
    with pytest.raises(ValueError, match="Unrecognized keyword arguments passed to "
                                         "ALONEEmbedding: {'filter': 'real'}"):
        ALONEEmbedding(50, 8, filter="real", seed=1)


# --- docs --------------------------------------------------------------------------------


def test_call_documents_reverse():
    assert "reverse: bool. When True, return the tied logits" in CompressedEmbedding.call.__doc__


@pytest.mark.parametrize("kind", ["sub", "alone", "define"])
def test_tied_logits_name_a_hidden_width_that_does_not_match(kind):
    layer = make_embedding(kind, input_dim=50, output_dim=8)
    with pytest.raises(ValueError, match=re.escape(
            "`reverse=True` scores hidden states of width output_dim=8 against every token "
            f"of layer '{layer.name}'. Received hidden states of shape (2, 6).")):
        layer(np.ones((2, 6), "float32"), reverse=True)


def test_every_kind_starts_from_a_pretrained_table_through_the_registry():
    table = np.random.default_rng(0).normal(size=(300, 16)).astype("float32")
    sub = make_pretrained_embedding(
        "sub", table, assignment="product", num_tables=4, rows_per_table=16, name="t")
    assert isinstance(sub, SubEmbedding) and sub.name == "t"
    rebuilt = keras.ops.convert_to_numpy(sub.embedding_table())
    assert reconstruction_quality(table, rebuilt)["mean_cosine"] > 0.5
    alone = make_pretrained_embedding("alone", table, seed=3)
    assert isinstance(alone, ALONEEmbedding) and (alone.input_dim, alone.output_dim) == (300, 16)
    define = make_pretrained_embedding(
        "define", table, map_dim=8, expand_dim=32, depth=2, max_groups=2,
        map_layer={"num_tables": 2, "rows_per_table": 32, "assignment": "product"})
    assert isinstance(define.map_layer, SubEmbedding) and define.map_layer.output_dim == 8
    with pytest.raises(ValueError, match=r"`output_dim=8` does not match the table's width \(16\)"):
        make_pretrained_embedding("alone", table, output_dim=8)

    class Plain(keras.layers.Embedding):
        pass

    try:
        register_embedding_kind("test_plain", Plain)
        with pytest.raises(ValueError, match="'test_plain' .Plain. cannot start from a pretrained"):
            make_pretrained_embedding("test_plain", table)
    finally:
        embedding_kinds._EMBEDDING_KINDS.pop("test_plain", None)
