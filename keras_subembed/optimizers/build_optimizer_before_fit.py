"""Build a model's optimizer before `fit` traces its first step."""

import contextlib


def build_optimizer_before_fit(model):
    """Builds `model.optimizer` on `model.trainable_variables` if it is not built.

    Keras on TensorFlow without a distribution strategy builds the optimizer inside
    the first traced train step. A `tf.function` trace that creates variables is
    traced again without them (and, under `jit_compile=True`, compiled again), so
    every `fit` paid for its step twice. With the optimizer built first, it traces
    once; the slots are zeros either way. Keras does the same under a strategy and
    on JAX (`Trainer._symbolic_build`).

    Example:

    >>> from keras_subembed.optimizers import build_optimizer_before_fit
    >>> model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    >>> model.compile(optimizer="adamw", loss="mse")
    >>> build_optimizer_before_fit(model)
    >>> model.optimizer.built
    True
    """
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None or optimizer.built:
        return
    # TensorFlow's trainer: slots of a tf.distribute strategy's variables are made in
    # its scope (the default strategy's scope is a no-op).
    strategy = getattr(model, "distribute_strategy", None)
    with strategy.scope() if strategy is not None else contextlib.nullcontext():
        optimizer.build(model.trainable_variables)
