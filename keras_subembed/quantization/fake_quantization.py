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

from keras_subembed.layer_walk import walk_layers
from keras_subembed.layers.compressed_embedding import CompressedEmbedding
from keras_subembed.quantization.kernel_rounding import fake_quantize
from keras_subembed.quantization.kernel_rounding import reduced_axes
from keras_subembed.quantization.kernel_rounding import round_kernel
from keras_subembed.quantization.recipes import get_recipe


def quantized_layers(model, recipe):
    """`[(layer, KernelRounding)]` for every kernel `recipe` rounds in `model`:
    each built `Dense` / `EinsumDense` outside a token embedding."""
    recipe = get_recipe(recipe)
    # An embedding's own layers (ALONE's feed-forward network) are part of
    # the compressed table, which stays float as the file stores it.
    inside_embeddings = {id(inner) for layer in walk_layers(model)
                         if _is_embedding(layer) for inner in walk_layers(layer)}
    found = []
    for layer in walk_layers(model):
        if id(layer) in inside_embeddings:
            continue
        if isinstance(layer, (keras.layers.Dense, keras.layers.EinsumDense)) and layer.built:
            rounding = recipe.rounding_for(layer._kernel.path)
            if rounding is not None:
                found.append((layer, rounding))
    return found


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
    straight-through gradients. Works eagerly and when traced (TensorFlow,
    JAX).

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
    layers = quantized_layers(model, recipe)
    swapped = []
    try:
        for layer, rounding in layers:
            if getattr(layer, "_fake_quant", None) is not None:
                continue  # already inside an enclosing block
            layer._fake_quant = (rounding, reduced_axes(layer))
            swapped.append((layer, layer.__class__))
            layer.__class__ = _fake_quant_class(layer.__class__)
        yield model
    finally:
        for layer, cls in swapped:
            layer.__class__ = cls
            layer._fake_quant = None


_FAKE_QUANT_CLASSES = {}


def _fake_quant_class(cls):
    """A subclass of `cls` whose `kernel` is fake-quantized; used only inside
    `fake_quantized`, which restores the class (so saving never sees it)."""
    if cls not in _FAKE_QUANT_CLASSES:
        def kernel(self):
            if self._fake_quant is None:  # saving, below
                return cls.kernel.fget(self)
            rounding, axes = self._fake_quant
            return fake_quantize(cls.kernel.fget(self), rounding, axes)

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

