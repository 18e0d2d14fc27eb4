"""Which gather layout is fast where: XLA and GPUs, or TensorFlow's own kernels."""

import keras
import tensorflow as tf

from keras_subembed.optional import jax

try:  # TensorFlow's internal query for an XLA context (it has no public one)
    from tensorflow.python.ops import control_flow_util
except ImportError:  # without it, XLA gets the row layout (correct, only slower)
    control_flow_util = None


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
    if tf.config.list_logical_devices("GPU"):
        return True
    try:
        # tf.function(jit_compile=True) traces its graph in an XLA context.
        return bool(control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph()))
    except AttributeError:  # the internal module or its function is gone: the row layout
        return False



def zero_padded_sum(parts):
    """The concatenation of `parts` along the last axis, as a sum of each part zero-padded to the full width."""
    total_width = sum(part.shape[-1] for part in parts)
    no_padding = [(0, 0)] * (len(parts[0].shape) - 1)
    total, start = None, 0
    for part in parts:
        end = start + part.shape[-1]
        padded = keras.ops.pad(part, no_padding + [(start, total_width - end)])
        total = padded if total is None else total + padded
        start = end
    return total


def side_by_side(parts):
    """`ops.concatenate(parts, axis=-1)`, laid out for XLA's GPU fusion where JAX compiles for a GPU.

    Compiled for an H100 (deviceless, benchmarks/RESULTS.md), XLA stores the
    whole concatenation of three gathered sub-vectors (256 MiB at 256 x 512
    tokens, d=512) when several ops consume it, where each part zero-padded to
    the full width and summed fuses into its consumers. On a CPU the padded
    sum is up to 1.4x slower, so CPUs and TensorFlow keep the concatenation.
    Values are equal: every position holds one part's value plus zeros.
    """
    if keras.backend.backend() != "jax":
        return keras.ops.concatenate(parts, axis=-1)
    return jax.lax.platform_dependent(
        *parts,
        cpu=lambda *cpu_parts: keras.ops.concatenate(cpu_parts, axis=-1),
        default=lambda *gpu_parts: zero_padded_sum(gpu_parts),
    )
