import re

import keras
import keras_hub
import numpy as np
import pytest
import tensorflow as tf

from keras_subembed.layers import ALONEEmbedding
from keras_subembed.layers import DeFINEEmbedding
from keras_subembed.layers import SubEmbedding
from keras_subembed.models import CompressedRobertaBackbone
from keras_subembed.models import CompressedRobertaMaskedLM
from keras_subembed.models import CompressedRobertaMaskedLMPreprocessor
from keras_subembed.models import compress_backbone
from tests.layers.layer_contract import assert_float32_close
from tests.layers.layer_contract import run_in_backend

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = ("the of to and in is was for on that with by it as at from he his said "
         "year new one two people news game team police government market world").split()
VOCABULARY = SPECIAL + WORDS + [f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz"] + list(
    "abcdefghijklmnopqrstuvwxyz.,")
VOCAB = len(VOCABULARY)
SMALL = dict(num_layers=1, num_heads=2, hidden_dim=16, intermediate_dim=32, max_sequence_length=24)
KINDS = {
    "embedding": {},
    "sub": dict(num_tables=2, reserved_ids=[0, 1, 2, 3, 4], seed=0),
    "alone": dict(seed=1, ffn_dim=24),
    "define": dict(map_dim=8, expand_dim=32, depth=2),
}
SENTENCES = [
    "the police said the government was in the news",
    "the team won one game in the new year",
    "he said his people were at the market",
    "two teams from the world said it was a new game",
] * 4


def make_backbone(kind, **kwargs):
    keras.utils.set_random_seed(0)
    return CompressedRobertaBackbone(
        VOCAB, embedding=kind, embedding_kwargs=KINDS[kind], **{**SMALL, **kwargs}
    )


def make_preprocessor(**kwargs):
    return CompressedRobertaMaskedLMPreprocessor.from_vocabulary(
        VOCABULARY, sequence_length=24, mask_selection_length=6, **kwargs
    )


def fixed_batch():
    keras.utils.set_random_seed(1)
    x, y, weights = make_preprocessor()(tf.constant(SENTENCES))
    return {k: np.asarray(v) for k, v in x.items()}, np.asarray(y), np.asarray(weights)


# --- preprocessing -----------------------------------------------------------------


def test_preprocessor_outputs_backbone_inputs_with_wordpiece_and_masks():
    x, y, weights = fixed_batch()
    assert sorted(x) == ["mask_positions", "padding_mask", "token_ids"]
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=VOCABULARY, lowercase=True)
    ids = np.asarray(tokenizer("the police said the government was in the news"))
    positions, token_ids = x["mask_positions"][0], x["token_ids"][0]
    unmasked = token_ids.copy()
    unmasked[positions[weights[0] > 0]] = y[0][weights[0] > 0]
    np.testing.assert_array_equal(unmasked[: len(ids) + 2], [2, *ids, 3])  # [CLS] ... [SEP]
    assert (x["padding_mask"][0] == (unmasked != 0)).all()
    real_tokens = x["padding_mask"].sum() - 2 * len(SENTENCES)  # not [CLS], [SEP]
    assert 0.05 < weights.sum() / real_tokens < 0.3  # ~15% selected
    assert (token_ids == VOCABULARY.index("[MASK]")).any()


def test_masked_lm_fits_raw_text_with_xla_through_tf_data():
    # keras-hub runs the preprocessor inside tf.data on every backend: only tf
    # ops may run there (keras.ops on JAX cannot take a symbolic tf.Tensor).
    preprocessor = make_preprocessor()
    texts = tf.data.Dataset.from_tensor_slices(SENTENCES).batch(8)
    x, y, weights = next(iter(texts.map(preprocessor)))
    assert isinstance(x["padding_mask"], tf.Tensor) and x["padding_mask"].dtype == tf.int32
    assert sorted(x) == ["mask_positions", "padding_mask", "token_ids"]
    masked_lm = CompressedRobertaMaskedLM(make_backbone("sub"), preprocessor)
    masked_lm.compile(optimizer=keras.optimizers.Adam(3e-3), jit_compile=True)
    # 16 steps as 2 epochs of 8 (the texts 4 times over, masked anew each time): each
    # epoch starts a tf.data iterator over the preprocessing graph, seconds each. The
    # second epoch's mean loss is about 5% below the first's (seeds 0-4, both backends).
    losses = masked_lm.fit(texts.repeat(4), epochs=2, verbose=0).history["loss"]
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0], losses


# --- backbone ------------------------------------------------------------------------


def train_on_the_fixed_batch(kind, folder):
    """`kind`'s masked LM (with its preprocessor, as a user builds it), trained with XLA:
    25 steps on the whole fixed batch (16 texts) as one epoch, a checkpoint written at
    its end. Returns the model and its loss and accuracy on that batch before and after.

    25 one-step epochs would train alike (same batch, same updates) but pay Keras'
    per-epoch setup 25 times. The preprocessor is set aside for the fixed batch: with
    one, `fit` and `evaluate` would tokenize and mask the already masked token ids again.
    """
    masked_lm = CompressedRobertaMaskedLM(make_backbone(kind), make_preprocessor())
    masked_lm.compile(optimizer=keras.optimizers.Adam(3e-3), jit_compile=True)
    x, y, weights = fixed_batch()
    preprocessor, masked_lm.preprocessor = masked_lm.preprocessor, None
    try:
        before = masked_lm.evaluate(x, y, sample_weight=weights, verbose=0, return_dict=True)
        checkpoint = keras.callbacks.ModelCheckpoint(
            str(folder / f"{kind}.weights.h5"), save_weights_only=True)
        steps = tf.data.Dataset.from_tensors((x, y, weights)).repeat(25)
        masked_lm.fit(steps, epochs=1, verbose=0, callbacks=[checkpoint])
        after = masked_lm.evaluate(x, y, sample_weight=weights, verbose=0, return_dict=True)
    finally:
        masked_lm.preprocessor = preprocessor
    return masked_lm, before, after


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """`trained(kind)`: `train_on_the_fixed_batch(kind)`, once per module.

    The training test asserts on the losses; the fresh-process test saves the same
    trained models and checkpoints (on JAX each kind's train step compiles for tens of
    seconds: once, not twice)."""
    folder = tmp_path_factory.mktemp("trained")
    models = {}

    def get(kind):
        if kind not in models:
            models[kind] = train_on_the_fixed_batch(kind, folder)
        return models[kind]

    get.folder = folder
    return get


@pytest.mark.parametrize("kind", KINDS)
def test_each_embedding_trains_with_xla_and_is_tied_to_the_head(kind, trained):
    masked_lm, before, after = trained(kind)
    backbone = masked_lm.backbone
    assert backbone.embedding_kind == kind
    head = masked_lm.masked_lm_head
    assert head.token_embedding is backbone.token_embedding
    own = {id(w) for w in backbone.token_embedding.weights}
    head_only = [w for w in head.weights if id(w) not in own]
    assert [tuple(w.shape) for w in head_only if VOCAB in w.shape] == [(VOCAB,)]  # bias
    assert masked_lm.jit_compile is True
    assert after["loss"] < 0.75 * before["loss"], (before, after)
    assert after["sparse_categorical_accuracy"] > before["sparse_categorical_accuracy"]


def test_projection_follows_a_narrower_embedding(tmp_path):
    backbone = CompressedRobertaBackbone(
        VOCAB, embedding="sub", embedding_kwargs=dict(output_dim=8, num_tables=2), **SMALL)
    assert backbone.token_embedding.output_dim == 8
    assert backbone.embedding_projection.kernel.shape == (8, 16)
    outputs = backbone({"token_ids": np.ones((2, 5), "int32"), "padding_mask": np.ones((2, 5), "int32")})
    assert outputs.shape == (2, 5, 16)
    masked_lm = CompressedRobertaMaskedLM(backbone)
    x, _, _ = fixed_batch()
    assert masked_lm.predict(x, verbose=0).shape == (len(SENTENCES), 6, VOCAB)
    # Copies keep the projection and its weights.
    inputs = {key: x[key] for key in ("token_ids", "padding_mask")}
    sums = SMALL["hidden_dim"] + SMALL["intermediate_dim"] + 24
    for copy in (compress_backbone(backbone, "embedding"),
                 CompressedRobertaBackbone.from_backbone(backbone, "embedding")):
        assert copy.embedding_projection.kernel.shape == (8, 16)
        assert_float32_close(copy(inputs), backbone(inputs), sums)
        copy.save(tmp_path / "copy.keras")
        loaded = keras.saving.load_model(tmp_path / "copy.keras")
        np.testing.assert_array_equal(loaded(inputs), copy(inputs))


def test_layer_instance_and_config_are_accepted():
    layer = SubEmbedding(VOCAB, 16, num_tables=2, name="token_embedding")
    backbone = CompressedRobertaBackbone(VOCAB, embedding=layer, **SMALL)
    assert backbone.token_embedding is layer
    config = backbone.get_config()
    clone = CompressedRobertaBackbone.from_config(config)
    assert isinstance(clone.token_embedding, SubEmbedding)
    assert clone.get_config() == config


def test_saved_models_and_checkpoints_reload_identically_in_a_fresh_process(tmp_path, trained):
    # The models trained with a checkpoint callback for the training test above.
    x, _, _ = fixed_batch()
    outputs = {}
    for kind in KINDS:
        masked_lm, _, _ = trained(kind)
        assert masked_lm.preprocessor is not None
        masked_lm.save(tmp_path / f"{kind}.keras")
        outputs[kind] = np.asarray(masked_lm(x))
    np.savez(tmp_path / "x.npz", **x)
    run_in_backend(
        keras.backend.backend(),
        f"""
        import numpy as np, keras
        import keras_subembed
        x = dict(np.load({str(tmp_path / 'x.npz')!r}))
        for kind in {list(KINDS)!r}:
            model = keras.saving.load_model({str(tmp_path)!r} + f"/{{kind}}.keras")
            assert type(model).__name__ == "CompressedRobertaMaskedLM", type(model)
            assert model.preprocessor.tokenizer.vocabulary_size() == {VOCAB}
            np.save({str(tmp_path)!r} + f"/{{kind}}.npy", np.asarray(model(x)))
            fresh = keras_subembed.models.CompressedRobertaMaskedLM.from_config(model.get_config())
            fresh.load_weights({str(trained.folder)!r} + f"/{{kind}}.weights.h5")
            np.save({str(tmp_path)!r} + f"/{{kind}}_checkpoint.npy", np.asarray(fresh(x)))
        """,
    )
    for kind in KINDS:
        np.testing.assert_array_equal(np.load(tmp_path / f"{kind}.npy"), outputs[kind])
        np.testing.assert_array_equal(np.load(tmp_path / f"{kind}_checkpoint.npy"), outputs[kind])


def test_from_backbone_copies_a_keras_hub_roberta_exactly():
    keras.utils.set_random_seed(3)
    roberta = keras_hub.models.RobertaBackbone(VOCAB, **SMALL)
    inputs = {"token_ids": np.random.default_rng(0).integers(0, VOCAB, (2, 9)).astype("int32"),
              "padding_mask": np.ones((2, 9), "int32")}
    dense = CompressedRobertaBackbone.from_backbone(roberta, embedding="embedding")
    # keras-hub's graph, rebuilt by CompressedBackbone: the same layers by name.
    assert [layer.name for layer in dense.layers] == [layer.name for layer in roberta.layers]
    # The same layers and weights: only op fusion may differ (sums of hidden and
    # intermediate width per layer, and the attention's over the sequence).
    sums = SMALL["hidden_dim"] + SMALL["intermediate_dim"] + 9
    assert_float32_close(dense(inputs), roberta(inputs), sums)

    compressed = CompressedRobertaBackbone.from_backbone(
        roberta, embedding="sub", embedding_kwargs=dict(num_tables=2, rows_per_table=12))
    assert isinstance(compressed.token_embedding, SubEmbedding)
    assert compressed.token_embedding.assignment == "explicit"  # clustered codes
    for source, target in zip(roberta.transformer_layers, compressed.transformer_layers):
        for a, b in zip(source.get_weights(), target.get_weights()):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(
        roberta.embeddings.position_embedding.get_weights()[0],
        compressed.position_embedding.get_weights()[0])
    # From a compressed backbone too, e.g. to another embedding kind.
    again = CompressedRobertaBackbone.from_backbone(compressed, embedding="embedding")
    assert_float32_close(again(inputs), compressed(inputs), sums)


@pytest.mark.tensorflow_only(reason="tf.distribute.MirroredStrategy")
def test_mirrored_strategy_fit_and_save_on_two_cpu_devices(tmp_path):
    output = run_in_backend(
        "tensorflow",
        f"""
        import tensorflow as tf
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        import numpy as np, keras
        from tests.models.families.test_compressed_roberta_backbone import fixed_batch, make_backbone
        from keras_subembed.models import CompressedRobertaMaskedLM
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
        assert strategy.num_replicas_in_sync == 2
        x, y, w = fixed_batch()
        with strategy.scope():
            model = CompressedRobertaMaskedLM(make_backbone("sub"))
            model.compile(optimizer=keras.optimizers.Adam(3e-3))  # jit_compile="auto"
        assert model.jit_compile is False  # Keras turns XLA off under a strategy
        first = model.fit(x, y, sample_weight=w, epochs=6, batch_size=8, verbose=0).history["loss"]
        assert first[-1] < first[0], first
        model.save({str(tmp_path / 'mirrored.keras')!r})
        loaded = keras.saving.load_model({str(tmp_path / 'mirrored.keras')!r})
        np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
        print("OK", first[0], first[-1])
        """,
    )
    assert "OK" in output, output


@pytest.mark.jax_only(reason="keras.distribution runs on JAX devices")
def test_data_parallel_fit_and_save_on_two_jax_cpu_devices(tmp_path):
    # XLA reads the device count when JAX starts: a fresh process.
    path = str(tmp_path / "data_parallel.keras")
    output = run_in_backend(
        "jax",
        f"""
        import os
        os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2"
        import jax, keras, numpy as np
        from tests.models.families.test_compressed_roberta_backbone import fixed_batch, make_backbone
        from keras_subembed.models import CompressedRobertaMaskedLM
        devices = jax.devices("cpu")
        assert len(devices) == 2, devices
        keras.distribution.set_distribution(keras.distribution.DataParallel(devices=devices))
        x, y, w = fixed_batch()
        model = CompressedRobertaMaskedLM(make_backbone("sub"))
        model.compile(optimizer=keras.optimizers.Adam(3e-3), jit_compile=True)
        first = model.fit(x, y, sample_weight=w, epochs=6, batch_size=8, verbose=0).history["loss"]
        assert first[-1] < first[0], first
        table = model.backbone.token_embedding.sub_tables[0].value
        assert len(table.sharding.device_set) == 2, table.sharding  # replicated on both
        model.save({path!r})
        loaded = keras.saving.load_model({path!r})
        np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
        print("OK", first[0], first[-1])
        """,
    )
    assert "OK" in output, output


# --- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(embedding="hashing"), "`embedding` must be a layer, a layer config or one of "
                                    "['alone', 'define', 'embedding', 'split', 'sub']. Received: embedding='hashing'"),
        (dict(hidden_dim=18, num_heads=4), "`hidden_dim` must be divisible by `num_heads`. "
                                           "Received: hidden_dim=18, num_heads=4"),
        (dict(embedding=SubEmbedding(VOCAB + 3, 16)), f"The token embedding's input_dim ({VOCAB + 3}) "
                                                      f"must equal `vocabulary_size` ({VOCAB})."),
        (dict(embedding=keras.layers.Embedding(VOCAB, 16)), "`embedding` must support tied logits"),
        (dict(embedding=ALONEEmbedding(VOCAB, 16), embedding_kwargs={"seed": 1}),
         "`embedding_kwargs` only apply when `embedding` is a short name"),
        (dict(num_layers=0), "`num_layers` must be a positive integer. Received: num_layers=0"),
    ],
)
def test_bad_configurations_raise_with_the_reason(kwargs, message):
    settings = {**SMALL, **kwargs}
    with pytest.raises(ValueError, match=re.escape(message)):
        CompressedRobertaBackbone(VOCAB, **settings)


def test_tokenizer_vocabulary_must_match_the_embedding():
    backbone = CompressedRobertaBackbone(VOCAB + 1, embedding="define",
                                         embedding_kwargs=KINDS["define"], **SMALL)
    assert isinstance(backbone.token_embedding, DeFINEEmbedding)
    with pytest.raises(ValueError, match=re.escape(
            f"The tokenizer's vocabulary ({VOCAB} tokens) does not match the backbone's "
            f"token embedding ({VOCAB + 1} ids)")):
        CompressedRobertaMaskedLM(backbone, make_preprocessor())
