"""DeFINE and ALONE compute each distinct id of a batch once (`per_distinct_id`)."""

import numpy as np
import pytest
from keras import ops

from keras_subembed.layers import ALONEEmbedding
from keras_subembed.layers import DeFINEEmbedding
from keras_subembed.layers import SubEmbedding
from keras_subembed.layers import distinct_rows
from keras_subembed.layers.distinct_rows import distinct_ids
from tests.layers.layer_contract import assert_float32_close
from tests.layers.layer_contract import compiled
from tests.layers.layer_contract import loss_and_gradients
from tests.layers.layer_contract import traced_shapes

VOCAB = 50
WIDTH = 16


def make_layer(kind, vocab=VOCAB):
    if kind == "define":
        return DeFINEEmbedding(vocab, WIDTH, map_dim=8, expand_dim=32, depth=3, max_groups=4)
    if kind == "define_sub_map":
        sub_map = SubEmbedding(vocab, 8, num_tables=2, assignment="random", seed=2)
        return DeFINEEmbedding(vocab, WIDTH, expand_dim=32, depth=2, max_groups=2, map_layer=sub_map)
    if kind == "alone_stored":
        return ALONEEmbedding(vocab, WIDTH, filter_kind="real", volatile=False, seed=5)
    return ALONEEmbedding(vocab, WIDTH, seed=5)


@pytest.mark.parametrize("shape, vocab", [((4, 30), 50), ((3, 10), 400), ((7,), 7), ((), 9)])
def test_distinct_ids_are_the_sorted_unique_ids_and_index_back(shape, vocab):
    ids = np.random.default_rng(0).integers(0, vocab, size=shape).astype("int32").reshape(-1)
    size = min(ids.size, vocab)
    for function in (distinct_ids, compiled(lambda ids: distinct_ids(ids, size))):
        distinct, index, count = (
            np.asarray(x) for x in (function(ids, size) if function is distinct_ids else function(ids))
        )
        unique = np.unique(ids)
        assert distinct.shape == (size,) and int(count) == unique.size
        np.testing.assert_array_equal(distinct[: unique.size], unique)
        np.testing.assert_array_equal(distinct[unique.size :], 0)
        np.testing.assert_array_equal(distinct[index], ids)


def per_token(monkeypatch):
    """Make DeFINE and ALONE compute every token (the path of dynamic shapes)."""
    monkeypatch.setattr(distinct_rows, "per_distinct_id", lambda *args, **kwargs: None)


def sin_loss(vectors):
    return ops.sum(ops.sin(3.0 * vectors))


def dense(gradient):
    """A gradient as NumPy; TensorFlow gives a gathered table's as IndexedSlices."""
    if gradient.dtype == object:
        import tensorflow as tf

        return np.asarray(tf.convert_to_tensor(gradient.item()))
    return gradient


@pytest.mark.parametrize("kind", ["define", "define_sub_map", "alone", "alone_stored"])
@pytest.mark.parametrize(
    "ids",
    [
        # More tokens than ids, only 20 of them used: chunks past the count are skipped.
        np.random.default_rng(1).integers(0, 20, size=(4, 30)),
        # Fewer tokens than ids, with repeats.
        np.array([[3, 3, 49, 0, 3], [49, 7, 7, 0, 1]]),
    ],
    ids=["more_tokens_than_ids", "fewer_tokens"],
)
def test_once_per_distinct_id_equals_per_token(kind, ids, monkeypatch):
    layer = make_layer(kind)
    layer(ids)  # builds it
    layer.distinct_chunk_size = 8  # several chunks (on JAX), some skipped
    results = {}
    for jit in (False, True):
        results["distinct", jit] = loss_and_gradients(layer, sin_loss, [ids], jit=jit)
    with monkeypatch.context() as patch:
        per_token(patch)
        results["per_token"] = loss_and_gradients(layer, sin_loss, [ids], jit=True)
    (want,), want_gradients = results["per_token"]
    assert want.shape == (*ids.shape, WIDTH)
    for key in (("distinct", False), ("distinct", True)):
        (got,), gradients = results[key]
        assert_float32_close(got, want, 64)
        for gradient, expected in zip(gradients, want_gradients):
            assert_float32_close(dense(gradient), dense(expected), 64 * ids.size)


@pytest.mark.parametrize("kind", ["define", "alone"])
def test_no_intermediate_has_a_row_per_token(kind):
    # 256 tokens, 100 ids: the expansion runs on distinct ids (in chunks on
    # JAX), never on one row per token.
    layer = make_layer(kind, vocab=100)
    ids = np.random.default_rng(3).integers(0, 100, size=(4, 64)).astype("int32")
    layer(ids)
    layer.distinct_chunk_size = 32
    shapes = traced_shapes(lambda ids: layer(ids), ids)
    widest = 32 if kind == "define" else layer.ffn_dim
    assert (256, widest) not in shapes and (4, 64, widest) not in shapes
    assert any(shape and shape[-1] == widest for shape in shapes), shapes


@pytest.mark.parametrize("kind", ["define", "alone"])
def test_compiled_bad_ids_give_zeros_and_leave_other_rows_alone(kind):
    layer = make_layer(kind)
    good = np.array([[1.0, 7.0, 7.0, 49.0]], "float32")
    bad = np.array([[1.0, np.nan, -3.0, 1e9]], "float32")
    function = compiled(lambda ids: layer(ids))
    clean, mixed = np.asarray(function(good)), np.asarray(function(bad))
    np.testing.assert_array_equal(mixed[0, 1:], 0)
    np.testing.assert_array_equal(mixed[0, 0], clean[0, 0])


@pytest.mark.parametrize("kind", ["define", "alone"])
def test_an_eager_call_gives_the_compiled_vectors_without_compiling_a_map(kind, monkeypatch):
    # On JAX an eager call loops over the chunks in Python: `ops.map` compiled its body
    # anew on every call (a new closure each time), seconds a call. Compiled, it still maps.
    layer = make_layer(kind)
    ids = np.random.default_rng(4).integers(0, VOCAB, size=(4, 30)).astype("int32")
    layer(ids)
    layer.distinct_chunk_size = 8  # several chunks, some of them past the distinct ids
    want = np.asarray(compiled(lambda ids: layer(ids))(ids))

    def no_map(*args, **kwargs):
        raise AssertionError("an eager call compiled a map")

    monkeypatch.setattr(distinct_rows.ops, "map", no_map)
    assert_float32_close(np.asarray(layer(ids)), want, 64)
