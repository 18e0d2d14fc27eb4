"""Training with transformer kernels rounded as the exported file stores them.

Fake quantization: the forward pass sees the rounded kernel, the gradient
passes straight through to the float kernel, so the exported file computes
what was trained. What a recipe quantizes: the kernel of every `Dense` and
`EinsumDense` layer of the model outside its token embedding (a keras-hub
encoder's transformer layers and pooler, a head, a user's own encoder; each
becomes one `FULLY_CONNECTED` op of the file). A recipe whose name says int4
must put int4 weights in the file: a model with no such layer is refused by
the export.
"""

import contextlib

import keras
import tensorflow as tf

from keras_subembed.layer_walk import walk_layers
from keras_subembed.layers.compressed_embedding import CompressedEmbedding
from keras_subembed.layers.compressed_embedding import forget_compiled_steps
from keras_subembed.layers.compressed_embedding import remember_model
from keras_subembed.optional import jax
from keras_subembed.quantization.kernel_rounding import fake_quantize
from keras_subembed.quantization.kernel_rounding import reduced_axes
from keras_subembed.quantization.kernel_rounding import round_kernel
from keras_subembed.quantization.recipes import get_recipe


def quantized_layers(model, recipe):
    """`[(layer, KernelRounding)]` for every kernel `recipe` rounds in `model`:
    each built `Dense` / `EinsumDense` outside a token embedding."""
    recipe = get_recipe(recipe)
    found = []
    for layer in kernel_layers(model):
        if layer.built:
            rounding = recipe.rounding_for(layer._kernel.path)
            if rounding is not None:
                found.append((layer, rounding))
    return found


def kernel_layers(model):
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

    Args:
        model: a `keras.Model` (or layer) whose `Dense` / `EinsumDense`
            kernels outside token embeddings `recipe` rounds.
        recipe: a `WeightRecipe` or the name of one (`RECIPES`).

    Example:
    >>> model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(8)])
    >>> x = np.random.default_rng(0).normal(size=(2, 64)).astype("float32")
    >>> with fake_quantized(model, "int4_dynamic"):
    ...     rounded = keras.ops.convert_to_numpy(model(x))  # what the int4 file computes
    >>> bool(np.allclose(rounded, keras.ops.convert_to_numpy(model(x)), atol=1e-6))
    False
    """
    remember_model(model)
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
        for layer in kernel_layers(model):
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
    if layers and not _tracing(layers):
        forget_compiled_steps(*layers)


def _tracing(layers):
    """Whether a step is being traced now: its own cache must not be dropped."""
    if keras.backend.backend() == "tensorflow":
        return tf.inside_function()
    if keras.backend.backend() == "jax":
        # A traced Keras step reads its variables as tracers.
        return any(isinstance(layer._kernel.value, jax.core.Tracer)
                   for layer in layers if layer.built)
    return False


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
