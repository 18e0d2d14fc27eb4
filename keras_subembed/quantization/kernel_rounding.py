"""Symmetric integer rounding of a kernel, as `ai-edge-quantizer` stores it.

`q = clip(round(w / s), -qmax, qmax)`, `qmax = 2^(bits-1) - 1`, with one scale
per output channel or per block of `block_size` input rows of each output
channel; blockwise scales are stored with bfloat16 precision.
`clipping="max"` takes `s = max|w| / qmax`; `clipping="mse"` takes, per
channel or block, the `s = r * max|w| / qmax` of `CLIP_RATIOS` that rounds
with the least squared error: a few large weights clipped buy a finer grid
for all others. Since the rounded kernel's largest value is then `qmax * s`,
the file's min-max quantizer stores exactly this grid.
"""

import dataclasses
import math

import keras
from keras import ops

from keras_subembed.checks import is_integer

MIN_SCALE = 1e-9  # as ai-edge-quantizer: a zero block gets a tiny scale, not 0
# `clipping="mse"` tries these fractions of a channel's (block's) largest |w|.
CLIP_RATIOS = tuple(1.0 - i / 30 for i in range(16))  # 1.0 down to 0.5
CLIPPINGS = ("max", "mse")
BITS = (2, 8)  # 1 bit has no nonzero symmetric level (qmax = 0)


@dataclasses.dataclass(frozen=True)
class KernelRounding:
    """Symmetric `bits`-bit integers, one scale per output channel
    (`block_size=None`) or per `block_size` input rows of each channel;
    `clipping` `"max"` or `"mse"` (see the module's docstring)."""

    bits: int
    block_size: int = None
    clipping: str = "max"

    def __post_init__(self):
        low, high = BITS
        if not is_integer(self.bits) or not low <= self.bits <= high:
            raise ValueError(f"`bits` must be an integer from {low} to {high}. "
                             f"Received: bits={self.bits!r}")
        if self.block_size is not None and (
                not is_integer(self.block_size) or self.block_size <= 0):
            raise ValueError("`block_size` must be a positive integer or None. "
                             f"Received: block_size={self.block_size!r}")
        if not isinstance(self.clipping, str) or self.clipping not in CLIPPINGS:
            raise ValueError(f"`clipping` must be one of {CLIPPINGS}. Received: "
                             f"clipping={self.clipping!r}")
        # Frozen: plain ints, so equal roundings compare and hash equal.
        object.__setattr__(self, "bits", int(self.bits))
        if self.block_size is not None:
            object.__setattr__(self, "block_size", int(self.block_size))

    @property
    def granularity(self):
        return "channelwise" if self.block_size is None else f"blockwise{self.block_size}"


def reduced_axes(layer):
    """Axes of `layer.kernel` summed over in its product with the inputs."""
    if isinstance(layer, keras.layers.EinsumDense):
        inputs, output = layer.equation.split("->")
        kernel = inputs.split(",")[1]
        return tuple(axis for axis, letter in enumerate(kernel) if letter not in output)
    return (0,)


def round_kernel(kernel, rounding, axes=(0,)):
    """`kernel` rounded to `rounding` (keras.ops, any backend; numpy works).

    `axes` are the kernel's input axes: they are flattened (in order) into
    the axis that a `FULLY_CONNECTED` op's weight blocks run along.
    """
    shape = tuple(kernel.shape)
    outputs = [axis for axis in range(len(shape)) if axis not in axes]
    order = list(axes) + outputs
    rows = math.prod(shape[axis] for axis in axes)
    block = rows if rounding.block_size is None else rounding.block_size
    if rows % block:
        raise ValueError(
            f"A kernel of shape {shape} has {rows} input rows, not a multiple of the "
            f"block size {block}: {rounding.granularity} rounding cannot apply."
        )
    x = ops.reshape(ops.transpose(kernel, order), (rows // block, block, -1))
    largest = ops.max(ops.abs(x), axis=1, keepdims=True)
    best = _rounded(x, largest, rounding)  # min-max: CLIP_RATIOS[0] is 1.0
    if rounding.clipping == "mse":
        best_error = ops.sum(ops.square(best - x), axis=1, keepdims=True)
        for ratio in CLIP_RATIOS[1:]:
            rounded = _rounded(x, largest * ratio, rounding)
            error = ops.sum(ops.square(rounded - x), axis=1, keepdims=True)
            better = error < best_error  # ties keep the larger clip
            best = ops.where(better, rounded, best)
            best_error = ops.where(better, error, best_error)
    x = ops.reshape(best, [shape[axis] for axis in order])
    return ops.transpose(x, [order.index(axis) for axis in range(len(shape))])


def _rounded(x, clip, rounding):
    """`x` on the grid whose largest value is `clip` (per channel / block)."""
    qmax = 2 ** (rounding.bits - 1) - 1
    scale = ops.maximum(clip, MIN_SCALE) / qmax
    if rounding.block_size is not None:
        # Blockwise scales are float16 with bfloat16's mantissa in the file.
        scale = ops.cast(ops.cast(scale, "bfloat16"), x.dtype)
    # Symmetric: the file's min-max scale of the rounded kernel is `scale` again.
    return ops.clip(ops.round(x / scale), -qmax, qmax) * scale


def fake_quantize(kernel, rounding, axes=(0,)):
    """`round_kernel` forward, identity backward (straight-through)."""
    return kernel + ops.stop_gradient(round_kernel(kernel, rounding, axes) - kernel)
