"""Which `FULLY_CONNECTED` ops of a float `.tflite` file hold which Keras kernels.

A recipe rounds Keras layers (`keras_subembed.quantization.quantized_layers`); the
quantizer selects ops by their scope, a name TensorFlow builds from the
layer names it traced through, with `_<n>` suffixes that make one layer's
name another's (`dense` appears as `dense_1`, `dense_1` as `dense_1_2`) and
none at all for a model's last op (`StatefulPartitionedCall:0`). So each op
is matched to a layer by its weight's values instead: the converter stores
the kernel transposed or reshaped, perhaps scaled by a constant it folded in
(attention's 1/sqrt(d)), never otherwise changed.
"""

import keras
import numpy as np

from keras_subembed.export.errors import ExportVerificationError
from keras_subembed.export.quantizer_recipes import import_ai_edge_quantizer
from keras_subembed.quantization.fake_quantization import quantized_layers

FLOAT32 = 0  # the LiteRT schema's TensorType code


def kernel_ops(flatbuffer, model, recipe):
    """`[(op scope, layer, KernelRounding)]` for each `FULLY_CONNECTED` op of
    `flatbuffer` (float32 `.tflite` bytes) whose weight is the kernel of a
    layer that `recipe` rounds in `model`.

    Raises as `rounded_layers` does, and an `ExportVerificationError` naming
    the layers when none of them is an op of the file.
    """
    layers = rounded_layers(model, recipe)
    name = getattr(recipe, "name", recipe)
    by_size = {}
    for layer, rounding in layers:
        kernel = np.sort(np.asarray(keras.ops.convert_to_numpy(layer._kernel), "float32"),
                         axis=None)
        by_size.setdefault(kernel.size, []).append((kernel, layer, rounding))
    qtyping, _, _, utils = import_ai_edge_quantizer(name)
    tflite = utils.read_model(bytearray(flatbuffer))
    found = []
    for subgraph in tflite.subgraphs:
        for op in subgraph.operators:
            if (tflite.operatorCodes[op.opcodeIndex].builtinCode
                    != qtyping.BuiltinOperator.FULLY_CONNECTED or len(op.inputs) < 2):
                continue
            weight = _float_constant(flatbuffer, tflite, subgraph.tensors[op.inputs[1]])
            if weight is None:
                continue
            weight = np.sort(weight)
            for kernel, layer, rounding in by_size.get(weight.size, ()):
                if _same_up_to_scale(weight, kernel):
                    found.append((utils.get_op_scope(op, subgraph.tensors), layer, rounding))
                    break
    if not found:
        paths = ", ".join(layer._kernel.path for layer, _ in layers[:5])
        raise ExportVerificationError(
            f"quantization={name!r}: none of the model's {len(layers)} kernel(s) it "
            f"rounds ({paths}{', ...' if len(layers) > 5 else ''}) matched a "
            "FULLY_CONNECTED op of the converted file, so nothing would be quantized."
        )
    return found


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


def _float_constant(flatbuffer, tflite, tensor):
    """The values of a float32 constant tensor, flattened; None for anything else."""
    if tensor.type != FLOAT32 or tensor.buffer <= 0:
        return None
    buffer = tflite.buffers[tensor.buffer]
    data = buffer.data
    if (data is None or not len(data)) and getattr(buffer, "offset", 0) > 1:
        # Files over 2 GB keep their buffers after the flatbuffer, by offset.
        data = np.frombuffer(flatbuffer, np.uint8, buffer.size, buffer.offset)
    if data is None or not len(data):
        return None
    return np.frombuffer(np.asarray(data, np.uint8).tobytes(), "<f4")


def _same_up_to_scale(weight, kernel):
    """Whether sorted `weight` is sorted `kernel` times a positive constant."""
    norm = float(np.dot(kernel, kernel))
    if norm == 0.0:
        return not np.any(weight)
    scale = float(np.dot(weight, kernel)) / norm
    if not scale > 0:
        return False
    return bool(np.max(np.abs(weight - scale * kernel)) <= 1e-5 * max(np.max(np.abs(weight)), 1e-30))
