"""Which `FULLY_CONNECTED` ops of a float `.tflite` file hold which Keras kernels.

A recipe rounds Keras layers (`keras_subembed.quantization.quantized_layers`); the
quantizer selects ops by their scope, a name TensorFlow builds from the
layer names it traced through, with `_<n>` suffixes that make one layer's
name another's (`dense` appears as `dense_1`, `dense_1` as `dense_1_2`) and
none at all for a model's last op (`StatefulPartitionedCall:0`). So each op
is matched to a layer by its weight's values instead: the converter stores
the kernel transposed or reshaped, perhaps scaled by a constant it folded in
(attention's 1/sqrt(d)) or by one per output channel (a following
`BatchNormalization`), never otherwise changed.
"""

import keras
import numpy as np

from keras_subembed.export.errors import ExportVerificationError
from keras_subembed.export.model_parts import embedding_rotations
from keras_subembed.optional import qtyping
from keras_subembed.optional import tfl_flatbuffer_utils
from keras_subembed.quantization.fake_quantization import quantized_layers
from keras_subembed.quantization.kernel_rounding import KernelRounding
from keras_subembed.tflite_metadata import read_model

FLOAT32 = 0  # the LiteRT schema's TensorType code


def kernel_ops(flatbuffer, model, recipe):
    """`[(op scope, layer, KernelRounding)]` for each `FULLY_CONNECTED` op of
    `flatbuffer` (float32 `.tflite` bytes) whose weight is the kernel of a
    layer that `recipe` rounds in `model`.

    Raises as `rounded_layers` does, and an `ExportVerificationError` naming
    the layers whose kernel no op holds (up to the scales above) while an op
    of its size keeps a float32 weight: the file would hold it in float32
    under the recipe's label.
    """
    layers = rounded_layers(model, recipe)
    name = getattr(recipe, "name", recipe)
    by_size = {}
    for layer, rounding in layers:
        kernel = np.asarray(keras.ops.convert_to_numpy(layer._kernel), "float32")
        by_size.setdefault(kernel.size, []).append(
            (np.sort(kernel, axis=None), kernel, layer, rounding))
    others = _other_weights(model, layers, by_size)
    # TensorFlow's reader: buffers a file over 2 GB keeps past the flatbuffer read in place.
    tflite = read_model(flatbuffer)
    found, matched, unmatched_sizes = [], set(), set()
    for scope, weight, shape in _float_fully_connected(tflite):
        ordered = np.sort(weight)
        # Equal kernels (two zero-initialised ones) are all this op's.
        same = [(layer, rounding) for values, kernel, layer, rounding
                in by_size.get(weight.size, ())
                if _same_up_to_scale(ordered, values)
                or _same_up_to_column_scales(weight.reshape(shape), kernel)]
        if same:
            found.append((scope, *same[0]))
            matched.update(id(layer) for layer, _ in same)
        elif not any(_same_up_to_scale(ordered, values)
                     for values in others.get(weight.size, ())):
            # Not a weight the recipe leaves to others (e.g. a SubEmbedding's
            # rotation, `rotation_ops`): it may be a rounded kernel the converter changed.
            unmatched_sizes.add(weight.size)
    # A kernel with no op at all was dropped (an unused pooler); one the size
    # of an op left unmatched would stay float32 in the file.
    missing = [layer for layer, _ in layers if id(layer) not in matched
               and int(np.prod(layer._kernel.shape)) in unmatched_sizes]
    if missing:
        paths = ", ".join(layer._kernel.path for layer in missing[:5])
        raise ExportVerificationError(
            f"quantization={name!r}: {len(missing)} of the model's {len(layers)} kernel(s) it "
            f"rounds ({paths}{', ...' if len(missing) > 5 else ''}) matched no "
            "FULLY_CONNECTED op of the converted file, where an op of their size keeps a "
            "float32 weight (the converter merged it with the ops around it): the file "
            "would hold it in float32 under the recipe's label."
        )
    return found


def rotation_ops(flatbuffer, model, bits):
    """`[(op scope, KernelRounding(bits))]` for each `FULLY_CONNECTED` op of
    `flatbuffer` (float32 `.tflite` bytes) whose weight is the rotation of a
    compressed embedding in `model` (`SubEmbedding(rotation=True)`), matched by value.

    A recipe with `table_bits` stores the embedding's arrays with those bits: its
    lookup tables (`int8_lookup_tables`) and, through these ops, its rotation, one
    scale per output column. Training rounds neither (int8 per column moves an
    orthogonal matrix's outputs by about 0.2%).
    """
    rotations = {}
    for values in embedding_rotations(model):
        rotations.setdefault(values.size, []).append(np.sort(values, axis=None))
    if not rotations:
        return []
    return [(scope, KernelRounding(bits)) for scope, weight, _ in _float_fully_connected(
                read_model(flatbuffer))
            if any(_same_up_to_scale(np.sort(weight), values)
                   for values in rotations.get(weight.size, ()))]


def rounded_layers(model, recipe):
    """`quantized_layers(model, recipe)`, or a `ValueError` when there are none:
    the file would hold float32 weights under the recipe's label."""
    layers = quantized_layers(model, recipe)
    if not layers:
        name = getattr(recipe, "name", recipe)
        raise ValueError(
            f"quantization={name!r} stores the kernels of Dense and EinsumDense layers "
            f"with fewer bits, and the model {model.name!r} has none outside its token "
            "embedding (an embedding-only model?): the file would hold float32 weights "
            "under that label. Export with quantization=None, 'dynamic' or 'float16'."
        )
    return layers


def _other_weights(model, layers, by_size):
    """`{size: [sorted values]}` of the model's float weights that `layers` do not own
    and that have a rounded kernel's size: an op holding one of them is accounted for."""
    kernels = {id(layer._kernel) for layer, _ in layers}
    others = {}
    for weight in model.weights:
        size = int(np.prod(weight.shape))
        if id(weight) in kernels or size not in by_size or "float" not in str(weight.dtype):
            continue
        values = np.asarray(keras.ops.convert_to_numpy(weight), "float32")
        others.setdefault(size, []).append(np.sort(values, axis=None))
    return others


def _float_fully_connected(tflite):
    """`(op scope, flattened weight, weight shape)` for each `FULLY_CONNECTED` op
    of a read model whose weight is a float32 constant."""
    for subgraph in tflite.subgraphs:
        for op in subgraph.operators:
            if (tflite.operatorCodes[op.opcodeIndex].builtinCode
                    != qtyping.BuiltinOperator.FULLY_CONNECTED or len(op.inputs) < 2):
                continue
            tensor = subgraph.tensors[op.inputs[1]]
            weight = _float_constant(tflite, tensor)
            if weight is not None:
                yield (tfl_flatbuffer_utils.get_op_scope(op, subgraph.tensors), weight,
                       tuple(tensor.shape))


def _float_constant(tflite, tensor):
    """The values of a float32 constant tensor, flattened; None for anything else."""
    data = tflite.buffers[tensor.buffer].data if tensor.buffer > 0 else None
    if tensor.type != FLOAT32 or data is None or not len(data):
        return None
    return np.frombuffer(bytes(data), "<f4")


def _same_up_to_column_scales(weight, kernel):
    """Whether `weight` (out, in) is a 2-D `kernel` (in, out) transposed, each
    output column times its own constant: the converter folds the per-channel
    scale of a following `BatchNormalization` into the kernel. Channelwise
    and blockwise rounding commute with such scales (symmetric grids), so
    the op stores the rounded kernel as well."""
    if kernel.ndim != 2 or kernel.shape[0] < 2 or weight.shape != kernel.T.shape:
        return False
    columns = kernel.T
    norms = np.sum(columns * columns, axis=1)
    scales = np.sum(weight * columns, axis=1) / np.where(norms > 0, norms, 1.0)
    error = np.max(np.abs(weight - scales[:, None] * columns))
    return bool(error <= 1e-5 * max(np.max(np.abs(weight)), 1e-30))


def _same_up_to_scale(weight, kernel):
    """Whether sorted `weight` is sorted `kernel` times a positive constant."""
    norm = float(np.dot(kernel, kernel))
    if norm == 0.0:
        return not np.any(weight)
    scale = float(np.dot(weight, kernel)) / norm
    if not scale > 0:
        return False
    return bool(np.max(np.abs(weight - scale * kernel)) <= 1e-5 * max(np.max(np.abs(weight)), 1e-30))
