"""Where compiled lookups run: some gathers are laid out for a GPU, others for a CPU."""

import keras


def accelerator_attached():
    """True when the backend places new computations on a GPU or TPU.

    Read while a function is traced: the layout of a gather chosen from it
    changes speed only, never values.
    """
    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        return jax.default_backend() != "cpu"
    if backend == "tensorflow":
        import tensorflow as tf

        return bool(tf.config.list_logical_devices("GPU"))
    return False
