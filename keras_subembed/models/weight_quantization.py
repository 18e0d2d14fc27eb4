"""Transformer kernels rounded to int4 / int8 as `ai-edge-quantizer` stores them.

One table of recipes serves both sides: `keras_subembed.export` turns a
recipe into an `ai-edge-quantizer` recipe for the `.tflite` file, and
training (`EmbeddingDistiller(quantize_transformer=...)`) runs the student
with its kernels rounded the same way (fake quantization: the forward pass
sees the rounded kernel, the gradient passes straight through to the float
kernel), so the exported file computes what was trained.

What a recipe quantizes: the kernel of every `Dense` and `EinsumDense` layer
of the model outside its token embedding (a keras-hub encoder's transformer
layers and pooler, a head, a user's own encoder; each becomes one
`FULLY_CONNECTED` op of the file). A recipe whose name says int4 must put
int4 weights in the file: a model with no such layer is refused by the
export. Rounding is symmetric (`q = clip(round(w / s), -qmax, qmax)`,
`qmax = 2^(bits-1) - 1`), with one scale per output channel or per block of
`block_size` input rows of each output channel; blockwise scales are stored
with bfloat16 precision. `clipping="max"` takes `s = max|w| / qmax`;
`clipping="mse"` (the int4 recipes) takes, per channel or block, the
`s = r * max|w| / qmax` of `CLIP_RATIOS` that rounds with the least squared
error: a few large weights clipped buy a finer grid for all others. Since
the rounded kernel's largest value is then `qmax * s`, the file's min-max
quantizer stores exactly this grid.

The dynamic recipes also store the float lookup tables the file reads with
`GATHER` / `SLICE` (a compressed embedding's sub-tables, the position
table) as int8 with one scale per column (`table_bits=8`,
`keras_subembed.export.lookup_tables`); training does not round them (int8
per column changes the sentence vectors by under 1e-4 cosine).
"""

import contextlib
import dataclasses
import math
import numbers
import re

import keras
import numpy as np
from keras import ops
from keras.src.backend import in_stateless_scope  # Keras has no public name for it

from keras_subembed.checks import check_choice
from keras_subembed.layer_walk import walk_layers
from keras_subembed.layers.compressed_embedding import CompressedEmbedding
from keras_subembed.layers.compressed_embedding import forget_compiled_steps

# Every kernel path: a recipe's own rounding applies to the whole model.
ANY_SCOPE = r""
# A layer path (a Keras variable path, or a .tflite op's scope, where
# TensorFlow appends `_<n>` to each name) inside a transformer layer.
TRANSFORMER_SCOPE = r"transformer_layer_\d+(_\d+)?/"
ATTENTION_OUTPUT_SCOPE = r"/attention_output(_\d+)?/"
MIN_SCALE = 1e-9  # as ai-edge-quantizer: a zero block gets a tiny scale, not 0
# `clipping="mse"` tries these fractions of a channel's (block's) largest |w|.
CLIP_RATIOS = tuple(1.0 - i / 30 for i in range(16))  # 1.0 down to 0.5
CLIPPINGS = ("max", "mse")
ACTIVATIONS = ("dynamic", "float")
BITS = (2, 8)  # 1 bit has no nonzero symmetric level (qmax = 0)
TABLE_BITS = (8,)


def _is_integer(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


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
        if not _is_integer(self.bits) or not low <= self.bits <= high:
            raise ValueError(f"`bits` must be an integer from {low} to {high}. "
                             f"Received: bits={self.bits!r}")
        if self.block_size is not None and (
                not _is_integer(self.block_size) or self.block_size <= 0):
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


@dataclasses.dataclass(frozen=True)
class WeightRecipe:
    """How one recipe stores the transformer's kernels.

    `activations` is `"dynamic"` (the kernels compute in integers on
    activations quantized at run time: fast) or `"float"` (weight-only: the
    kernels are dequantized and compute in float). `overrides` are
    `(scope regex, KernelRounding)` pairs; the last one matching a layer's
    path wins, as in `ai-edge-quantizer`. `table_bits=8` stores the file's
    float lookup tables as int8 (None: float).
    """

    name: str
    rounding: KernelRounding
    activations: str
    overrides: tuple = ()
    description: str = ""
    table_bits: int = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"`name` must be a non-empty string. Received: name={self.name!r}")
        if not isinstance(self.rounding, KernelRounding):
            raise ValueError("`rounding` must be a KernelRounding. "
                             f"Received: rounding={self.rounding!r}")
        check_choice("activations", self.activations, ACTIVATIONS)
        overrides = self.overrides
        if not isinstance(overrides, (tuple, list)) or not all(
                isinstance(pair, (tuple, list)) and len(pair) == 2 and isinstance(pair[0], str)
                and isinstance(pair[1], KernelRounding) for pair in overrides):
            raise ValueError("`overrides` must be a tuple of (scope regex, KernelRounding) "
                             f"pairs. Received: overrides={overrides!r}")
        for pattern, _ in overrides:
            try:
                re.compile(pattern)
            except re.error as error:
                raise ValueError(f"`overrides` holds the scope {pattern!r}, not a regular "
                                 f"expression ({error}). Received: overrides={overrides!r}")
        object.__setattr__(self, "overrides", tuple(tuple(pair) for pair in overrides))
        if not any(self.table_bits is bits or (_is_integer(self.table_bits)
                                               and self.table_bits == bits)
                   for bits in (None,) + TABLE_BITS):
            raise ValueError(f"`table_bits` must be {' or '.join(map(str, TABLE_BITS))} or "
                             f"None. Received: table_bits={self.table_bits!r}")
        if not isinstance(self.description, str):
            raise ValueError("`description` must be a string. "
                             f"Received: description={self.description!r}")

    def get_config(self):
        """A JSON-ready dict; `WeightRecipe.from_config` gives the recipe back."""
        return dataclasses.asdict(self)

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["rounding"] = KernelRounding(**config["rounding"])
        config["overrides"] = tuple((pattern, KernelRounding(**rounding))
                                    for pattern, rounding in config.get("overrides", ()))
        return cls(**config)

    def scopes(self):
        """`(regex, KernelRounding)` rules over layer paths; the last match wins."""
        return ((ANY_SCOPE, self.rounding),) + tuple(
            (f"{TRANSFORMER_SCOPE}.*{pattern}", rounding) for pattern, rounding in self.overrides)

    def rounding_for(self, path):
        """The rounding of the kernel at `path`, or None when it stays float."""
        found = None
        for pattern, rounding in self.scopes():
            if re.search(pattern, path):
                found = rounding
        return found


INT8 = KernelRounding(8)
INT4 = KernelRounding(4, clipping="mse")
INT4_BLOCK32 = KernelRounding(4, 32, clipping="mse")
RECIPES = {recipe.name: recipe for recipe in [
    WeightRecipe("int8_weight_only", INT8, "float",
                 description="int8 per channel, float compute"),
    WeightRecipe("int4_weight_only", INT4, "float",
                 description="int4 per channel, float compute (slow: dequantizes every call)"),
    WeightRecipe("int4_dynamic", INT4, "dynamic", table_bits=8,
                 description="int4 per channel, integer compute, int8 lookup tables"),
    WeightRecipe("int4_blockwise32_dynamic", INT4_BLOCK32, "dynamic", table_bits=8,
                 description="int4 per block of 32 inputs, integer compute, int8 lookup tables"),
    WeightRecipe("int4_blockwise32_dynamic_int8_attention_output", INT4_BLOCK32, "dynamic",
                 overrides=((ATTENTION_OUTPUT_SCOPE, INT8),), table_bits=8,
                 description="int4_blockwise32_dynamic, attention output projections in int8"),
]}


def get_recipe(name, argument="recipe"):
    """The `WeightRecipe` called `name`; a ValueError names `argument` and lists the valid names."""
    if isinstance(name, WeightRecipe):
        return name
    if not isinstance(name, str) or name not in RECIPES:
        raise ValueError(
            f"`{argument}` must be one of the weight quantization recipes "
            f"{', '.join(sorted(RECIPES))}. Received: {argument}={name!r}"
        )
    return RECIPES[name]


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


def quantized_layers(model, recipe):
    """`[(layer, KernelRounding)]` for every kernel `recipe` rounds in `model`:
    each built `Dense` / `EinsumDense` outside a token embedding."""
    recipe = get_recipe(recipe)
    found = []
    for layer in _kernel_layers(model):
        if layer.built:
            rounding = recipe.rounding_for(layer._kernel.path)
            if rounding is not None:
                found.append((layer, rounding))
    return found


def _kernel_layers(model):
    """Every `Dense` / `EinsumDense` of `model` outside a token embedding, built or not."""
    # An embedding's own layers (ALONE's feed-forward network) are part of
    # the compressed table, which stays float as the file stores it.
    inside_embeddings = {id(inner) for layer in walk_layers(model)
                         if _is_embedding(layer) for inner in walk_layers(layer)}
    return [layer for layer in walk_layers(model)
            if id(layer) not in inside_embeddings
            and isinstance(layer, (keras.layers.Dense, keras.layers.EinsumDense))]


def _is_embedding(layer):
    return isinstance(layer, (keras.layers.Embedding, CompressedEmbedding))


def round_weights(model, recipe):
    """Round, in place, every kernel of `model` that `recipe` quantizes."""
    for layer, rounding in quantized_layers(model, recipe):
        layer._kernel.assign(round_kernel(layer._kernel.value, rounding, reduced_axes(layer)))
    return model


@contextlib.contextmanager
def fake_quantized(model, recipe):
    """Inside the block, `model`'s transformer kernels read as `recipe` rounds them.

    The float kernels stay the variables (what the optimizer updates and what
    is saved); only the value the layers compute with is rounded, with
    straight-through gradients. Works eagerly, in `predict` / `encode_text` /
    `evaluate` / `fit` (their compiled steps are retraced on entering and
    leaving the block) and when traced (TensorFlow, JAX). Layers built inside
    the block are rounded from their first call. A nested block applies its
    own recipe to `model` and gives the outer one back on exit.

    Example:
    >>> with fake_quantized(encoder, "int4_blockwise32_dynamic"):
    ...     vectors = encoder(inputs)  # ~ the int4 .tflite file's output
    """
    with rounded_kernels(model, recipe) as layers:
        # Keras reuses a model's traced predict/evaluate/train step: one
        # traced on the other side of the block would compute the wrong kernels.
        _forget_traces(layers)
        try:
            yield model
        finally:
            _forget_traces(layers)


@contextlib.contextmanager
def rounded_kernels(model, recipe):
    """`fake_quantized` without retracing: for a model that computes with
    `recipe` in every one of its own calls (`EmbeddingDistiller`). Yields the
    layers whose kernels it rounds."""
    recipe = get_recipe(recipe)
    saved = []
    try:
        for layer in _kernel_layers(model):
            saved.append((layer, layer.__class__, getattr(layer, "_fake_quant", None)))
            layer.__class__ = _fake_quant_class(layer.__class__)
            # The rounding is looked up at call time: a layer built inside
            # the block has no kernel path yet.
            layer._fake_quant = recipe
        yield [layer for layer, _, _ in saved]
    finally:
        for layer, cls, previous in reversed(saved):
            layer.__class__ = cls
            layer._fake_quant = previous


def _forget_traces(layers):
    if layers and not _tracing():
        forget_compiled_steps(*layers)


def _tracing():
    """Whether a step is being traced now: its own cache must not be dropped."""
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        return tf.inside_function()
    # JAX traces Keras models through `stateless_call`.
    return in_stateless_scope()


_FAKE_QUANT_CLASSES = {}


def _fake_quant_class(cls):
    """A subclass of `cls` whose `kernel` is fake-quantized; used only inside
    `fake_quantized`, which restores the class (so saving never sees it)."""
    if cls in _FAKE_QUANT_CLASSES.values():
        return cls  # inside an enclosing block
    if cls not in _FAKE_QUANT_CLASSES:
        def kernel(self):
            kernel = cls.kernel.fget(self)
            if self._fake_quant is None:  # saving, below
                return kernel
            rounding = self._fake_quant.rounding_for(self._kernel.path)
            if rounding is None:
                return kernel
            return fake_quantize(kernel, rounding, reduced_axes(self))

        def save_own_variables(self, store):
            # Keras saves `self.kernel` (with LoRA merged), which reads rounded
            # here: files written inside the block must hold the float kernels.
            fake_quant, self._fake_quant = self._fake_quant, None
            try:
                cls.save_own_variables(self, store)
            finally:
                self._fake_quant = fake_quant

        _FAKE_QUANT_CLASSES[cls] = type(cls.__name__, (cls,), {
            "kernel": property(kernel), "save_own_variables": save_own_variables,
            "__module__": cls.__module__})
    return _FAKE_QUANT_CLASSES[cls]
