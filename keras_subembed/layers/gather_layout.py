"""Which gather layout is fast where: XLA and GPUs, or TensorFlow's own kernels."""

import keras


def column_gathers_are_fast():
    """True when the function being traced is compiled by XLA or runs on a GPU/TPU.

    Gathering scalars along the last axis of small `(N, M)` score matrices
    is fast under XLA, which fuses the gathers and their sum into one pass
    that writes the `(N, V)` output once, and on GPUs; TensorFlow's own CPU
    kernels (graph mode, eager, TFLite) copy whole rows much faster. Read
    while tracing: the layout changes speed only, never values.
    """
    backend = keras.backend.backend()
    if backend == "jax":
        return True  # every JAX function runs through XLA
    if backend != "tensorflow":
        return False
    import tensorflow as tf

    if tf.config.list_logical_devices("GPU"):
        return True
    try:
        # tf.function(jit_compile=True) traces its graph in an XLA context.
        # TensorFlow has no public query for it: without this internal one,
        # XLA gets the row layout (correct, only slower).
        from tensorflow.python.ops import control_flow_util

        return bool(control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph()))
    except (ImportError, AttributeError):
        return False
