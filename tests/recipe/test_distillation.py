"""The recipe's distillation: its options checked first, runs from one start averaged."""

import keras
import numpy as np
import pytest

from keras_subembed.recipe import distillation
from keras_subembed.recipe.distillation import check_distillation_options


class _Weights(keras.layers.Layer):
    def build(self, _):
        self.kernel = self.add_weight(shape=(2,), initializer="ones")
        self.codes = self.add_weight(shape=(2,), dtype="int32", initializer="ones",
                                     trainable=False)

    def call(self, inputs):
        return inputs


def test_runs_distil_from_the_same_start_and_keep_the_mean_of_their_weights(monkeypatch):
    model = keras.Sequential([keras.Input((2,)), _Weights()])
    layer = model.layers[0]
    starts, seeds = [], []

    def distil_once(teacher, student, preprocessor, texts, pairs, options, seed, verbose,
                    distribution=None):
        seeds.append(seed)
        starts.append((layer.kernel.numpy().copy(), layer.codes.numpy()))
        layer.kernel.assign(np.array([2.0, 4.0]) * len(starts))
        return {"full": float(len(starts)), "full_pair": 0.5}

    monkeypatch.setattr(distillation, "_distil_once", distil_once)
    monkeypatch.setattr(distillation, "training_preprocessor", lambda teacher, length: None)
    losses = distillation.distil(None, model, ["a"], runs=2, seed=5, verbose=0)
    assert seeds == [5, 6]  # each run draws its batches in its own order
    for kernel, codes in starts:  # each run starts from the same weights
        np.testing.assert_array_equal(kernel, [1.0, 1.0])
        np.testing.assert_array_equal(codes, [1, 1])
    np.testing.assert_allclose(layer.kernel.numpy(), [3.0, 6.0])  # mean of [2, 4] and [4, 8]
    np.testing.assert_array_equal(layer.codes.numpy(), [1, 1])
    assert losses == {"full": 1.5, "full_pair": 0.5}
    # One run keeps its own weights.
    starts.clear()
    layer.kernel.assign([1.0, 1.0])
    assert distillation.distil(None, model, ["a"], runs=1, verbose=0) == {
        "full": 1.0, "full_pair": 0.5}
    np.testing.assert_allclose(layer.kernel.numpy(), [2.0, 4.0])
    # No steps: nothing runs and nothing changes.
    assert distillation.distil(None, model, ["a"], steps=0, verbose=0) == {}


@pytest.mark.parametrize("name, value, message", [
    ("steps", -1, "`steps` must be an integer >= 0"),
    ("embedding_steps", 2.5, "`embedding_steps` must be an integer >= 0"),
    ("runs", 0, "`runs` must be a positive integer"),
    ("batch_size", 0, "`batch_size` must be a positive integer"),
    ("batch_size", 3, "`batch_size` must be even"),
    ("sequence_length", 1, "`sequence_length` must be at least 4"),
    ("learning_rate", float("nan"), "`learning_rate` must be a finite number > 0"),
    ("embedding_learning_rate", 0.0, "`embedding_learning_rate` must be a finite number > 0"),
    ("pair_temperature", 0, "`pair_temperature` must be a finite number > 0"),
    ("pair_loss_weight", float("nan"), "`pair_loss_weight` must be a finite number >= 0"),
    ("sentence_loss_weight", -5, "`sentence_loss_weight` must be a finite number >= 0"),
    ("quantize_transformer", "bogus", "`quantize_transformer` must be one of"),
    ("seed", -1, "`seed` must be an int"),
    ("steps", "240", "`steps` must be an integer >= 0"),
])
def test_every_option_is_checked_by_name(name, value, message):
    with pytest.raises(ValueError, match=message):
        check_distillation_options(**{name: value})


def test_unknown_options_are_refused_and_defaults_filled_in():
    with pytest.raises(TypeError, match=r"Unknown distillation option\(s\): \['step'\]"):
        check_distillation_options(step=3)
    options = check_distillation_options(steps=7)
    assert options["steps"] == 7 and options["runs"] == 2 and options["seed"] == 0
