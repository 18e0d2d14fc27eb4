"""GPTQ: each kernel rounded to its recipe's levels with calibration data.

Rounding every weight to its nearest level (`round_weights`) ignores what
the layer reads. GPTQ (Frantar et al., 2023) rounds one input row of the
kernel at a time and moves the rows not yet rounded to cancel the error on
the layer's outputs, weighted by the second moments of its inputs,
`H = X^T X` over the calibration tokens. The levels stay the recipe's: the
scale per channel (or block) that `round_kernel` picks, so that the file
exported with the recipe stores exactly the kernels this leaves, and
quantization-aware training (`EmbeddingDistiller(quantize_transformer=...)`)
starts from them. Keras' own `model.quantize("gptq")` is not used: it
replaces the layers by its own int4 layers with their own (asymmetric or
min-max) scales, which a `.tflite` recipe would round a second time.
"""

import keras
import numpy as np

from keras_subembed.checks import check_bool
from keras_subembed.checks import check_positive_number
from keras_subembed.quantization.fake_quantization import quantized_layers
from keras_subembed.quantization.kernel_rounding import reduced_axes
from keras_subembed.quantization.kernel_rounding import round_kernel
from keras_subembed.quantization.recipes import get_recipe


def gptq_round_weights(model, recipe, data, damping=0.01, activation_order=True, verbose=True):
    """Round, in place, every kernel of `model` that `recipe` quantizes, with GPTQ on `data`.

    The kernels end on the grid `round_kernel` gives (rounding them again
    keeps every level); a channel (block) whose GPTQ levels would not keep that
    grid's largest level, and so would be stored on another scale, takes the
    nearest-level rounding instead.

    Args:
        model: a `keras.Model` whose `Dense` / `EinsumDense` kernels outside
            token embeddings `recipe` rounds (a keras-hub encoder, a
            compressed student).
        recipe: a `WeightRecipe` or the name of one (`RECIPES`).
        data: the calibration batches, each one input of `model` (a dict such
            as a preprocessor's output, or an array); a `tf.data.Dataset` or
            any iterable. With a `"padding_mask"` entry, padded positions
            are left out of the statistics.
        damping: the fraction of the mean diagonal of `H` added to its
            diagonal (a float > 0): larger trusts the calibration data less.
        activation_order: round the input rows with the largest second
            moments first (as GPTQ's `act_order`).
        verbose: a progress bar over the kernels.

    Returns:
        `model`.

    Example:
    >>> from keras_subembed.quantization import round_weights
    >>> model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(8)])
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(512, 8)) @ rng.normal(size=(8, 64))  # correlated inputs
    >>> x = (x + 0.1 * rng.normal(size=x.shape)).astype("float32")
    >>> y = model.predict(x, verbose=0)
    >>> nearest = keras.models.clone_model(model)
    >>> nearest.set_weights(model.get_weights())
    >>> _ = round_weights(nearest, "int4_dynamic")
    >>> _ = gptq_round_weights(model, "int4_dynamic", [x[:256], x[256:]], verbose=False)
    >>> def error(m): return float(np.mean((m.predict(x, verbose=0) - y) ** 2))
    >>> error(model) < 0.2 * error(nearest)
    True
    """
    recipe = get_recipe(recipe)
    damping = check_positive_number("damping", damping)
    check_bool("activation_order", activation_order)
    check_bool("verbose", verbose)
    layers = quantized_layers(model, recipe)
    if not layers:
        raise ValueError(f"`model` has no kernel that the recipe {recipe.name!r} quantizes.")
    hessians = input_moments(model, [layer for layer, _ in layers], data)
    progress = keras.utils.Progbar(len(layers), unit_name="kernel") if verbose else None
    for index, (layer, rounding) in enumerate(layers):
        axes = reduced_axes(layer)
        kernel = keras.ops.convert_to_numpy(layer._kernel.value)
        layer._kernel.assign(gptq_round_kernel(kernel, rounding, axes, hessians[id(layer)],
                                               damping, activation_order))
        if progress:
            progress.update(index + 1)
    return model


def input_moments(model, layers, data):
    """`{id(layer): X^T X / n}` of each layer's inputs over `data`'s tokens."""
    sums = {id(layer): 0.0 for layer in layers}
    counts = {id(layer): 0 for layer in layers}
    batch_state = {}

    def hook(layer, call):
        def recorded(inputs, *args, **kwargs):
            x = _input_rows(layer, keras.ops.convert_to_numpy(inputs))
            mask = batch_state.get("mask")
            if mask is not None and mask.size == x.shape[0]:
                x = x[mask.reshape(-1) > 0]
            # The query, key and value projections read one tensor the same way: one
            # product. The entry holds `inputs`, so that its id is not reused meanwhile.
            key = (id(inputs), getattr(layer, "equation", "dense"))
            if key not in batch_state["products"]:
                batch_state["products"][key] = (inputs, x.T @ x, x.shape[0])
            _, product, count = batch_state["products"][key]
            sums[id(layer)] = sums[id(layer)] + product
            counts[id(layer)] += count
            return call(inputs, *args, **kwargs)
        return recorded

    for layer in layers:
        layer.call = hook(layer, layer.call)  # an instance attribute, deleted below
    try:
        for batch in data:
            if isinstance(batch, tuple):  # (x, y) or (x, y, sample_weight)
                batch = batch[0]
            mask = batch.get("padding_mask") if isinstance(batch, dict) else None
            batch_state["mask"] = None if mask is None else keras.ops.convert_to_numpy(mask)
            batch_state["products"] = {}
            model(batch, training=False)
    finally:
        for layer in layers:
            del layer.call
    missed = [layer.name for layer in layers if not counts[id(layer)]]
    if missed:
        raise ValueError(
            f"`data` gave no calibration tokens to the layers {missed[:3]} "
            f"({len(missed)} of {len(layers)}): it must hold at least one batch "
            "of `model`'s inputs with an unpadded position.")
    return {key: sums[key].astype("float64") / counts[key] for key in sums}


def _input_rows(layer, x):
    """`x` as rows of the kernel's reduced axes flattened in the kernel's order."""
    if isinstance(layer, keras.layers.EinsumDense):
        operands, output = layer.equation.split("->")
        inputs, kernel = operands.split(",")
        reduced = [letter for letter in kernel if letter not in output]
        kept = [inputs.index(letter) for letter in inputs if letter not in reduced]
        x = np.transpose(x, kept + [inputs.index(letter) for letter in reduced])
        width = int(np.prod(x.shape[len(kept):]))
        return x.reshape(-1, width).astype("float32")
    return x.reshape(-1, x.shape[-1]).astype("float32")


def gptq_round_kernel(kernel, rounding, axes, hessian, damping=0.01, activation_order=True):
    """`kernel` (numpy) rounded to `rounding`'s grid by GPTQ with the input moments `hessian`."""
    to_rows, from_rows = _row_layout(kernel.shape, axes)
    weights = to_rows(kernel).astype("float64")
    nearest = to_rows(np.asarray(keras.ops.convert_to_numpy(round_kernel(kernel, rounding, axes))))
    rows = weights.shape[0]
    qmax = 2 ** (rounding.bits - 1) - 1
    block = rows if rounding.block_size is None else rounding.block_size
    # Nearest-level rounding puts each block's largest |w| on +-qmax: its scale.
    blocks = nearest.reshape(rows // block, block, -1)
    scales = np.maximum(np.abs(blocks).max(axis=1, keepdims=True) / qmax, 1e-30)
    scales = np.broadcast_to(scales, blocks.shape).reshape(rows, -1).astype("float64")
    levels = _gptq_levels(weights, scales, hessian, qmax, damping, activation_order)
    rounded = (levels * scales).astype(kernel.dtype)
    # Keep a block's GPTQ levels only where the file would store them as they are.
    again = to_rows(np.asarray(keras.ops.convert_to_numpy(
        round_kernel(from_rows(rounded), rounding, axes))))
    # (To a float32 ulp or so: backends divide and multiply by the scale differently.)
    same = np.abs(again - rounded) <= 1e-3 * scales
    kept = np.all(same.reshape(rows // block, block, -1), axis=1, keepdims=True)
    return from_rows(np.where(np.broadcast_to(kept, blocks.shape).reshape(rows, -1),
                              rounded, nearest))


def _row_layout(shape, axes):
    """Functions from a kernel of `shape` to `[inputs, outputs]` rows (its input `axes`
    flattened, as `round_kernel` blocks them) and back."""
    outputs = [axis for axis in range(len(shape)) if axis not in axes]
    order = list(axes) + outputs
    rows = int(np.prod([shape[axis] for axis in axes]))
    ordered_shape = [shape[axis] for axis in order]
    return (lambda kernel: np.transpose(kernel, order).reshape(rows, -1),
            lambda matrix: np.transpose(matrix.reshape(ordered_shape), np.argsort(order)))


def _gptq_levels(weights, scales, hessian, qmax, damping, activation_order):
    """Integer levels `[rows, outputs]` of `weights` on `scales`, rounded row by row
    (GPTQ's columns of W^T), each row's error spread over the rows not yet rounded."""
    rows = weights.shape[0]
    hessian = np.array(hessian, dtype="float64")
    # An input that was always 0 gets a unit moment: its row rounds to the
    # nearest level and moves no other row.
    dead = np.diag(hessian) == 0
    hessian[dead, dead] = 1.0
    permutation = (np.argsort(-np.diag(hessian), kind="stable") if activation_order
                   else np.arange(rows))
    weights = weights[permutation].copy()
    scales = scales[permutation]
    hessian = hessian[np.ix_(permutation, permutation)]
    hessian[np.diag_indices(rows)] += damping * np.mean(np.diag(hessian))
    # Upper Cholesky factor of H^-1: row i's error moves row j > i by U[i, j] / U[i, i].
    factor = np.linalg.cholesky(np.linalg.inv(hessian)).T
    levels = np.empty_like(weights)
    for i in range(rows):
        levels[i] = np.clip(np.rint(weights[i] / scales[i]), -qmax, qmax)
        error = (weights[i] - levels[i] * scales[i]) / factor[i, i]
        weights[i + 1:] -= np.outer(factor[i, i + 1:], error)
    return levels[np.argsort(permutation)]
