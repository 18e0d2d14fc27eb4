"""The weak registry of models whose compiled steps a layer change must drop."""

import gc
import weakref

import keras
import numpy as np

from keras_subembed.layers import ALONEEmbedding
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
