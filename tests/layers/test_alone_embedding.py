import json
import re

import keras
import numpy as np
import pytest

from keras_subembed.layers import ALONEEmbedding
from keras_subembed.layers import random_filters
from tests.layers import random_filters_reference
from tests.layers.layer_contract import assert_compiled_matches_eager
from tests.layers.layer_contract import assert_float32_close
from tests.layers.layer_contract import assert_keras_file_came_back
from tests.layers.layer_contract import assert_masked_lm_head_trains
from tests.layers.layer_contract import assert_tflite_matches_keras
from tests.layers.layer_contract import compiled
from tests.layers.layer_contract import keras_files_moved_to_the_other_backend
from tests.layers.layer_contract import masked_lm_model
from tests.layers.layer_contract import tflite_masked_lm

VOCAB = 500
WIDTH = 16
GOLDEN_IDS = np.array([0, 1, 101, 30_521])
GOLDEN_ROWS = [
    [26, 36, 51, 25, 23, 17, 53, 18],
    [3, 17, 39, 19, 13, 17, 59, 37],
    [58, 52, 36, 28, 10, 56, 56, 59],
    [21, 26, 39, 29, 13, 12, 33, 56],
]
GOLDEN_FILTERS = {
    "binary": [
        [0.0, 0.0, 0.0, 0.0, 1.0, 1.0],
        [1.0, 1.0, 1.0, 1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
        [1.0, 1.0, 0.0, 1.0, 1.0, 0.0],
    ],
    "real": [
        [0.20332834124565125, 0.6721795797348022, 0.4281855523586273,
         -0.6841400265693665, -1.1362465620040894, 0.7870002388954163],
        [-2.050028085708618, 0.32293322682380676, 1.4209063053131104,
         1.0979729890823364, 1.339574933052063, 1.4161220788955688],
        [0.49038010835647583, -1.002289056777954, 0.9664075970649719,
         -0.172231063246727, -1.3347907066345215, -0.03588147088885307],
        [-1.4543956518173218, -2.126575231552124, 1.566824197769165,
         -1.102757215499878, 0.9305261373519897, 1.614666223526001],
    ],
}
FILTERS = ["binary", "real"]


def make_layer(filter_kind="binary", vocab=VOCAB, width=WIDTH, **kwargs):
    kwargs.setdefault("seed", 7)
    kwargs.setdefault("kernel_initializer", keras.initializers.GlorotUniform(seed=3))
    return ALONEEmbedding(vocab, width, filter_kind=filter_kind, **kwargs)


def numpy_filters(layer, ids):
    return random_filters_reference.filters(layer, ids)


def numpy_embeddings(layer, ids):
    masked = numpy_filters(layer, ids) * np.asarray(layer.base_vector)
    hidden = np.maximum(masked @ np.asarray(layer.hidden_kernel), 0)
    return hidden @ np.asarray(layer.output_kernel)


# --- the stateless hash and the filters -------------------------------------------


def test_hash_matches_numpy_reference_on_edge_values_eager_and_xla():
    values = np.array([0, 1, 2, 12345, 2**31 - 1, -(2**31), -1, -12345], dtype=np.int32)
    want = random_filters_reference.mix(values.view(np.uint32))
    np.testing.assert_array_equal(random_filters.mix(values), want)
    np.testing.assert_array_equal(compiled(random_filters.mix)(values), want)
    # Pinned: lowbias32 of 0, 1, 2, 12345 (as int32 bit patterns).
    np.testing.assert_array_equal(want[:4], [0, 1753845952, -787275391, -1859191561])


@pytest.mark.parametrize("filter", FILTERS)
def test_filters_are_pinned_golden_values(filter):
    layer = ALONEEmbedding(30_522, 32, filter_kind=filter, seed=1234)
    rows = random_filters.row_choices(GOLDEN_IDS.astype("int32"), layer._keys, 64)
    np.testing.assert_array_equal(rows, GOLDEN_ROWS)
    filters = layer.filters(GOLDEN_IDS)
    np.testing.assert_array_equal(filters[:, :6], np.float32(GOLDEN_FILTERS[filter]))


@pytest.mark.parametrize("filter", FILTERS)
def test_filters_equal_numpy_reference_eager_and_compiled(filter):
    layer = make_layer(filter, vocab=5000, base_dim=24)
    ids = np.arange(5000)
    want = numpy_filters(layer, ids)
    np.testing.assert_array_equal(layer.filters(ids), want)
    np.testing.assert_array_equal(compiled(layer.filters)(ids), want)


FRESH_FILTERS = dict(input_dim=30_522, output_dim=32, filter_kind="real", seed=99)
FRESH_IDS = np.arange(0, 30_522, 7)


@pytest.fixture(scope="module")
def on_jax(tmp_path_factory):
    """The two cross-backend tests' work on the other backend, in one fresh process (a
    process start imports TensorFlow, JAX and Keras): the masked-LM `.keras` file's
    round trip, and a layer's filters recomputed there. Each part fails on its own."""
    folder = tmp_path_factory.mktemp("on_jax")
    layer = make_layer("real")
    model, _ = masked_lm_model(layer)
    ids = np.random.default_rng(5).integers(0, VOCAB, size=(3, 7)).astype("int32")
    positions = np.array([[0, 2]] * 3, dtype="int32")
    # ALONE's filters regenerate from the seed: bit-identical on both backends.
    probes = {"filters": f"model.get_layer({layer.name!r}).filters(inputs[0])"}
    np.save(folder / "filter_ids.npy", FRESH_IDS)
    filters = f"""
        import numpy as np
        from keras_subembed.layers import ALONEEmbedding
        layer = ALONEEmbedding(**{FRESH_FILTERS!r})
        ids = np.load({str(folder / "filter_ids.npy")!r})
        np.save({str(folder / "filters.npy")!r}, np.asarray(layer.filters(ids)))
        """
    failures = keras_files_moved_to_the_other_backend(
        {"model": (model, [ids, positions], probes)}, folder, {"filters": filters})
    return dict(folder=folder, failures=failures, layer=layer, model=model,
                inputs=[ids, positions], probes=probes)


@pytest.mark.tensorflow_only(reason="one comparison of TensorFlow's and JAX's filters; the JAX run "
                              "would repeat it")
def test_filters_are_bit_identical_in_a_fresh_process_on_the_other_backend(on_jax):
    assert on_jax["failures"]["filters"] is None, on_jax["failures"]["filters"]
    here = ALONEEmbedding(**FRESH_FILTERS).filters(FRESH_IDS)
    np.testing.assert_array_equal(np.load(on_jax["folder"] / "filters.npy"), here)


@pytest.mark.parametrize("p0", [0.3, 0.5, 0.8])
def test_binary_filter_zero_rate_is_p0(p0):
    layer = make_layer(vocab=20_000, base_dim=64, p0=p0)
    filters = np.asarray(layer.filters(np.arange(20_000)))
    assert set(np.unique(filters)) <= {0.0, 1.0}
    assert abs((filters == 0).mean() - p0) < 0.02


def test_real_filter_is_standard_normal_like():
    layer = make_layer("real", vocab=20_000, base_dim=64)
    filters = np.asarray(layer.filters(np.arange(20_000)))
    assert abs(filters.mean()) < 0.05
    assert abs(filters.var() - 1.0) < 0.05
    # Sums of 32 uniform bytes: nearly Gaussian tails (P(|x| > 2) = 4.6% for N(0, 1)).
    assert 0.035 < (np.abs(filters) > 2).mean() < 0.055


def test_different_seeds_and_ids_give_different_filters():
    first = np.asarray(make_layer(seed=1).filters(np.arange(VOCAB)))
    second = np.asarray(make_layer(seed=2).filters(np.arange(VOCAB)))
    assert (first != second).mean() > 0.3
    # Binary filters of width 16 collide by the birthday bound; 48 bits do not.
    wide = np.asarray(make_layer(base_dim=48).filters(np.arange(VOCAB)))
    assert len({row.tobytes() for row in wide}) == VOCAB


@pytest.mark.parametrize("filter", FILTERS)
def test_volatile_and_stored_filters_and_vectors_are_identical(filter):
    volatile = make_layer(filter)
    stored = make_layer(filter, volatile=False)
    ids = np.arange(VOCAB)
    np.testing.assert_array_equal(volatile.filters(ids), stored.filters(ids))
    np.testing.assert_array_equal(volatile(ids), stored(ids))
    hidden = np.random.default_rng(0).normal(size=(3, WIDTH)).astype("float32")
    np.testing.assert_array_equal(volatile(hidden, reverse=True), stored(hidden, reverse=True))
    names = {w.name: w for w in stored.non_trainable_weights}
    assert names["row_choices"].shape == (VOCAB, 8) and names["row_choices"].dtype == "uint8"
    expected_dtype = "uint8" if filter == "binary" else "int16"
    assert names["source_matrices"].shape == (8 * 64, WIDTH)
    assert names["source_matrices"].dtype == expected_dtype


# --- values, sizes ----------------------------------------------------------------


@pytest.mark.parametrize("filter", FILTERS)
def test_lookup_equals_ffn_of_filtered_base_vector(filter):
    layer = make_layer(filter, base_dim=12, ffn_dim=20)
    ids = np.random.default_rng(0).integers(0, VOCAB, size=(3, 5))
    assert_float32_close(layer(ids), numpy_embeddings(layer, ids), 12 + 20)


def test_parameter_count_and_volatile_stores_nothing_else():
    layer = ALONEEmbedding(30_522, 256, seed=1)
    report = layer.compression_report()
    assert report.trainable_params == 256 + 256 * 512 + 512 * 256
    assert report.non_trainable_params == 0
    assert report.stored_bytes == 4 * report.trainable_params
    assert report.dense_params == 30_522 * 256
    assert report.compression_ratio > 29


def test_authors_initialisation():
    binary = ALONEEmbedding(100, 32, ffn_dim=96, seed=0)
    real = ALONEEmbedding(100, 32, ffn_dim=96, filter_kind="real", seed=0)
    assert binary.base_initializer.stddev == pytest.approx(128**-0.05)
    assert real.base_initializer.stddev == pytest.approx(128**-0.3)
    binary.build()
    limit = np.sqrt(6 / (32 + 96))
    assert np.abs(np.asarray(binary.hidden_kernel)).max() <= limit


@pytest.mark.parametrize("chunk", [8192, 64, 499])
def test_tied_logits_equal_dense_product_for_any_chunking(chunk, monkeypatch):
    layer = make_layer("real")
    monkeypatch.setattr(layer, "logits_chunk_size", chunk)
    hidden = np.random.default_rng(1).normal(size=(2, 3, WIDTH)).astype("float32")
    want = hidden @ np.asarray(layer.embedding_table()).T
    assert_float32_close(layer(hidden, reverse=True), want, WIDTH)


def test_freeze_caches_the_table_for_lookup_and_logits():
    layer = make_layer()
    ids = np.arange(VOCAB)
    hidden = np.random.default_rng(1).normal(size=(4, WIDTH)).astype("float32")
    vectors, logits = np.asarray(layer(ids)), np.asarray(layer(hidden, reverse=True))
    assert layer.freeze() is layer
    assert layer.cached and layer.cached_table.shape == (VOCAB, WIDTH)
    np.testing.assert_array_equal(layer(ids), vectors)
    assert_float32_close(layer(hidden, reverse=True), logits, WIDTH)
    clone = ALONEEmbedding.from_config(layer.get_config())
    clone.build()
    clone.set_weights(layer.get_weights())
    np.testing.assert_array_equal(clone(ids), vectors)


def test_dropout_only_in_training_and_switches_off_after_stop_step():
    layer = make_layer(dropout=0.5, dropout_stop_step=3)
    ids = np.arange(40)
    inference = np.asarray(layer(ids))
    np.testing.assert_array_equal(layer(ids, training=False), inference)
    for _ in range(3):
        assert not np.allclose(layer(ids, training=True), inference)
    assert int(layer.dropout_step.numpy()) == 3
    assert_float32_close(layer(ids, training=True), inference, layer.base_dim + layer.ffn_dim)


def test_compute_mask_and_mixed_precision():
    layer = make_layer(mask_zero=True, dtype="mixed_float16")
    ids = np.array([[0, 4, 0, 9]])
    np.testing.assert_array_equal(layer.compute_mask(ids), [[False, True, False, True]])
    assert layer(ids).dtype == "float16"
    assert layer.base_vector.dtype == "float32"


# --- errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(filter_kind="gaussian"), "`filter_kind` must be \"binary\" or \"real\". Received: filter_kind='gaussian'"),
        (dict(p0=0.0), "`p0` must be a probability strictly between 0 and 1. Received: p0=0.0"),
        (dict(p0=1.5), "Received: p0=1.5"),
        (dict(base_dim=0), "`base_dim` must be a positive integer. Received: base_dim=0"),
        (dict(ffn_dim=2.5), "Received: ffn_dim=2.5"),
        (dict(num_source_matrices=-1), "Received: num_source_matrices=-1"),
        (dict(source_columns=0), "Received: source_columns=0"),
        (dict(dropout=1.0), "`dropout` must be a float in [0, 1). Received: dropout=1.0"),
        (dict(seed=-3), "`seed` must be an int in [0, 2**32) or None. Received: seed=-3"),
        (dict(volatile="yes"), "`volatile` must be a bool. Received: volatile='yes'"),
    ],
)
def test_constructor_errors_name_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        make_layer(**kwargs)


def test_out_of_range_ids_raise_eagerly_and_give_zeros_compiled():
    layer = make_layer()
    with pytest.raises(ValueError, match=r"Token ids must be in \[0, input_dim=500\).*\[500, 9999\]"):
        layer(np.array([[3, 500, 9999]]))
    out = np.asarray(compiled(layer)(np.array([[3, 500, -1]], "int32")))
    np.testing.assert_array_equal(out[0, 1:], 0)
    assert_float32_close(out[0, 0], layer(np.array([3]))[0], layer.base_dim + layer.ffn_dim)


# --- compiled paths, serialization, TFLite -------------------------------------------


@pytest.mark.parametrize("volatile", [True, False])
@pytest.mark.parametrize("filter", FILTERS)
def test_xla_matches_eager_forward_reverse_and_gradient(filter, volatile):
    ids = np.random.default_rng(1).integers(0, VOCAB, size=(4, 9))
    hidden = np.random.default_rng(2).normal(size=(4, 3, WIDTH)).astype("float32")
    assert_compiled_matches_eager(make_layer(filter, volatile=volatile), ids, hidden)


def test_masked_lm_head_ties_to_the_layer_and_trains_with_xla():
    assert_masked_lm_head_trains(make_layer("real", ffn_dim=64), VOCAB, epochs=25)


def test_config_round_trips_exactly():
    layer = make_layer("real", p0=0.3, dropout=0.1, dropout_stop_step=10, volatile=False,
                       kernel_regularizer="l2", mask_zero=True)
    config = layer.get_config()
    clone = ALONEEmbedding.from_config(json.loads(json.dumps(config)))
    assert clone.get_config() == config
    np.testing.assert_array_equal(clone.filters(np.arange(VOCAB)), layer.filters(np.arange(VOCAB)))


def test_unseeded_layer_records_its_seed():
    layer = ALONEEmbedding(VOCAB, WIDTH)
    assert isinstance(layer.get_config()["seed"], int)
    clone = ALONEEmbedding.from_config(layer.get_config())
    np.testing.assert_array_equal(clone.filters(np.arange(50)), layer.filters(np.arange(50)))


@pytest.mark.tensorflow_only(reason="both directions in one round trip (saved here, loaded and "
                              "saved again on JAX, reloaded here): the JAX run would repeat it")
def test_keras_file_holds_no_filters_and_moves_between_backends(on_jax):
    layer, model = on_jax["layer"], on_jax["model"]
    assert all(int(np.prod(w.shape)) < VOCAB * WIDTH for w in model.weights if w.path.startswith(layer.name))
    assert_keras_file_came_back(model, on_jax["inputs"], on_jax["folder"] / "model",
                                on_jax["failures"]["model"], on_jax["probes"])


@pytest.mark.tensorflow_only(reason="TFLite conversion")
@pytest.mark.parametrize("filter", FILTERS)
def test_tflite_builtins_only_matches_keras_and_stores_no_filters(filter):
    vocab, width = 30_522, 32
    layer = make_layer(filter, vocab=vocab, width=width, ffn_dim=48)
    runner, model = tflite_masked_lm(layer)
    assert_tflite_matches_keras(runner, model, vocab, width)
    # Nothing stored grows with V or with c * D0: the file holds the FFN, the
    # head (its V-sized bias), the hash keys and the op graph (~70 KB here, as
    # the logits are built in 4 chunks). A folded V-sized id range (122 KB)
    # or the M x c x D0 source entries (64 KB) would break the bound.
    ffn_and_head_bytes = 4 * (width + 3 * width * 48 + width * width + 3 * width + vocab)
    assert runner.file_bytes < ffn_and_head_bytes + 100_000, runner.file_bytes
    assert runner.file_bytes < vocab * width * 4 / 10
