"""The weak registry of models whose compiled steps a layer change must drop, and the
cache of a layer fitted to a pretrained table."""

import gc
import weakref

import keras
import numpy as np
import pytest

from keras_subembed.layers import ALONEEmbedding
from keras_subembed.layers import DeFINEEmbedding
from keras_subembed.layers import SplitEmbedding
from keras_subembed.layers import SubEmbedding
from keras_subembed.layers.compressed_embedding import _MODELS_WITH_STEPS
from keras_subembed.layers.compressed_embedding import forget_compiled_steps
from keras_subembed.layers.compressed_embedding import remember_model

BATCH = np.array([[1, 5, 9], [2, 3, 4]], dtype="int32")


def make_model():
    layer = ALONEEmbedding(100, 12, seed=1)
    ids = keras.Input((None,), dtype="int32")
    return layer, keras.Model(ids, layer(ids))


def test_a_model_that_calls_the_layer_is_remembered_and_its_steps_dropped_on_freeze():
    layer, model = make_model()
    before = model.predict(BATCH, verbose=0)
    model(BATCH)  # an eager call names the model as the caller on every backend
    assert model in _MODELS_WITH_STEPS
    assert model.predict_function is not None
    layer.freeze()
    assert model.predict_function is None
    for weight in layer.trainable_weights:  # only the cache can still give the vectors
        weight.assign(np.zeros(weight.shape, weight.dtype))
    np.testing.assert_allclose(model.predict(BATCH, verbose=0), before, rtol=1e-6, atol=1e-6)


def test_only_models_holding_the_layer_lose_their_steps():
    layer, model = make_model()
    _, other = make_model()
    for each in (model, other):
        each.predict(BATCH, verbose=0)
        remember_model(each)
    forget_compiled_steps(layer)
    assert model.predict_function is None
    assert other.predict_function is not None


def test_the_registry_keeps_no_model_alive():
    layer, model = make_model()
    model.predict(BATCH, verbose=0)
    model(BATCH)
    assert model in _MODELS_WITH_STEPS
    model_ref, layer_ref = weakref.ref(model), weakref.ref(layer)
    del model, layer
    gc.collect()
    assert model_ref() is None and layer_ref() is None
    assert all(each is not None for each in _MODELS_WITH_STEPS)


def test_a_failed_call_leaves_no_call_context_open():
    layer = ALONEEmbedding(100, 12, seed=1)
    try:
        layer(np.array([[1, 500]]))  # out of range: a ValueError
    except ValueError:
        pass
    dense = keras.layers.Dense(2, activity_regularizer="l2")
    for _ in range(2):
        dense(np.ones((1, 3), "float32"))
    # Each call clears the last one's losses, unless a context was left open.
    assert len(dense.losses) == 1


@pytest.mark.parametrize("kind, kwargs", [
    (ALONEEmbedding, dict(seed=1)),
    (SubEmbedding, dict(num_tables=4, rows_per_table=16, rotation=True)),
    (SplitEmbedding, dict(head_rows=20, tail_kwargs=dict(num_tables=4, rows_per_table=16))),
    (DeFINEEmbedding, dict(map_dim=8, expand_dim=32)),
])
def test_from_pretrained_with_cached_gives_the_fitted_table_not_zeros(kind, kwargs):
    # A layer made `cached` holds a cache of zeros until weights load (from_config's case);
    # a fitted one is frozen once its weights are set.
    table = np.random.default_rng(0).normal(size=(300, 16)).astype("float32")
    layer = kind.from_pretrained(table, cached=True, **kwargs)
    assert layer.cached and layer.get_config()["cached"]
    ids = np.arange(300)
    want = np.asarray(layer.embed(ids))  # the kind's own lookup, not the cache
    assert np.abs(want).max() > 0
    np.testing.assert_allclose(np.asarray(layer(ids)), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(layer.cached_table), want, rtol=1e-6, atol=1e-6)
    if kind is SubEmbedding:  # a fitted table: the same as the uncached layer's
        plain = kind.from_pretrained(table, **kwargs)
        np.testing.assert_allclose(want, np.asarray(plain.embedding_table()), rtol=1e-6,
                                   atol=1e-6)
    with pytest.raises(ValueError, match=r"`cached` must be a bool. Received: cached='yes'"):
        kind.from_pretrained(table, cached="yes", **kwargs)
