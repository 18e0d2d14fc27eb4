import keras
import numpy as np

from keras_subembed.optimizers import LayerRateAdamW
from keras_subembed.optimizers import build_optimizer_before_fit


def make_model():
    keras.utils.set_random_seed(0)
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), keras.layers.Dense(1)])


def test_builds_the_slots_of_every_trainable_variable_once():
    model = make_model()
    model.compile(optimizer=LayerRateAdamW(1e-3), loss="mse")
    assert not model.optimizer.built
    build_optimizer_before_fit(model)
    assert model.optimizer.built
    # AdamW: a momentum and a velocity for each of the 4 kernels and biases.
    slots = [v for v in model.optimizer.variables if v.path.endswith(("_momentum", "_velocity"))]
    assert len(slots) == 2 * len(model.trainable_variables) == 8
    before = [id(v) for v in model.optimizer.variables]
    build_optimizer_before_fit(model)  # built: left as it is
    assert [id(v) for v in model.optimizer.variables] == before


def test_a_model_without_an_optimizer_is_left_alone():
    model = make_model()
    build_optimizer_before_fit(model)
    assert getattr(model, "optimizer", None) is None


def test_fit_then_traces_its_step_once_and_trains_as_before(monkeypatch):
    x = np.random.default_rng(0).normal(size=(64, 4)).astype("float32")
    y = x @ np.arange(4, dtype="float32")[:, None]
    losses = []
    for build_first in (False, True):
        model = make_model()
        model.compile(optimizer=keras.optimizers.AdamW(1e-2), loss="mse")
        traces = []
        train_step = type(model).train_step

        def counted(self, *args):  # (data), or (state, data) on JAX
            traces.append(1)
            return train_step(self, *args)

        monkeypatch.setattr(type(model), "train_step", counted)
        if build_first:
            build_optimizer_before_fit(model)
        losses.append(model.fit(x, y, batch_size=16, epochs=2, verbose=0).history["loss"])
        monkeypatch.undo()
    assert len(traces) == 1, traces
    # The same steps from the same start: the slots start at zero either way.
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-6)
