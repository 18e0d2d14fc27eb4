"""`ai-edge-quantizer` recipes: int4 / int8 transformer weights in a `.tflite` file.

The recipes themselves (names, bits, granularity, per-layer overrides) are
`keras_subembed.quantization.RECIPES`, shared with training;
this module applies one to a float32 flatbuffer and checks that every
`FULLY_CONNECTED` weight of the transformer came out as the recipe says.
`ai-edge-quantizer` is optional (the `quantize` extra, `keras_subembed.optional`).
"""

import contextlib
import io
import re
import warnings

from keras_subembed.export.errors import ExportVerificationError
from keras_subembed.optional import ai_edge_quantizer
from keras_subembed.optional import qtyping
from keras_subembed.optional import recipe_manager
from keras_subembed.optional import tfl_flatbuffer_utils
from keras_subembed.quantization.recipes import RECIPE_NAMES
from keras_subembed.quantization.recipes import get_recipe

# A recipe's file's tolerance in both `.tflite` formats (see `ExportFormat.tolerances`):
# int8 kernels err as dynamic range does, int4 ones up to half the largest |output|.
RECIPE_TOLERANCES = {name: 0.1 if name.startswith("int8") else 0.5 for name in RECIPE_NAMES}
# TensorType codes of the LiteRT schema for the integer weight types we write.
WEIGHT_BITS = {9: 8, 17: 4}  # INT8, INT4


def quantizer_recipe(recipe, ops=None):
    """The `ai-edge-quantizer` recipe (a list of dicts) for a `WeightRecipe` or its name.

    `ops` (`[(op scope, KernelRounding)]`, see `kernel_ops`) names the exact
    ops to quantize; without it the recipe's own scope rules select them.
    """
    recipe = get_recipe(recipe)
    manager = recipe_manager.RecipeManager()
    add = (manager.add_dynamic_config if recipe.activations == "dynamic"
           else manager.add_weight_only_config)
    for regex, rounding in _rules(recipe, ops):
        granularity = ("CHANNELWISE" if rounding.block_size is None
                       else f"BLOCKWISE_{rounding.block_size}")
        add(regex=regex, operation_name=qtyping.TFLOperationName.FULLY_CONNECTED,
            num_bits=rounding.bits, granularity=qtyping.QuantGranularity[granularity])
    return manager.get_quantization_recipe()


def _rules(recipe, ops):
    if ops is None:
        return recipe.scopes()
    return [(f"^{re.escape(scope)}$", rounding) for scope, rounding in ops]


def quantize_flatbuffer(flatbuffer, recipe, ops=None):
    """`flatbuffer` (float32 `.tflite` bytes) with `recipe`'s integer weights.

    `ops` as in `quantizer_recipe`. Raises `ExportVerificationError` when a
    selected weight is not stored with the recipe's bits (`ai-edge-quantizer`
    silently skips a configuration its kernels do not support).
    """
    recipe = get_recipe(recipe)
    engine = ai_edge_quantizer.Quantizer(bytearray(flatbuffer), quantizer_recipe(recipe, ops))
    # Its summary table and progress bars would fill an export's output.
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
            warnings.catch_warnings():
        # The int8 lookup tables are quantized already, on purpose.
        warnings.filterwarnings("ignore", "Input model is already partially quantized")
        result = engine.quantize(enable_progress_bar=False, enable_progress_report=False)
    quantized = bytes(result.quantized_model)
    wrong = [f"{scope.split(';')[0]} ({bits or 'float'} bits, wanted {want})"
             for scope, bits, want in weight_bits(quantized, recipe, ops) if bits != want]
    if wrong:
        raise ExportVerificationError(
            f"ai-edge-quantizer did not apply quantization={recipe.name!r} to "
            f"{len(wrong)} weight(s): {'; '.join(wrong[:3])}."
        )
    return quantized


def weight_bits(flatbuffer, recipe, ops=None):
    """`[(op scope, bits of its weight or None, bits the recipe asks)]` for every
    `FULLY_CONNECTED` op of `flatbuffer` that `recipe` quantizes (`ops` as in
    `quantizer_recipe`)."""
    recipe = get_recipe(recipe)
    chosen = None if ops is None else dict(ops)
    model = tfl_flatbuffer_utils.read_model(bytearray(flatbuffer))
    found = []
    for subgraph in model.subgraphs:
        # Weight-only recipes feed the op a DEQUANTIZE of the integer weight.
        dequantized = {op.outputs[0]: op.inputs[0] for op in subgraph.operators
                       if model.operatorCodes[op.opcodeIndex].builtinCode
                       == qtyping.BuiltinOperator.DEQUANTIZE}
        for op in subgraph.operators:
            code = model.operatorCodes[op.opcodeIndex].builtinCode
            if code != qtyping.BuiltinOperator.FULLY_CONNECTED:
                continue
            scope = tfl_flatbuffer_utils.get_op_scope(op, subgraph.tensors)
            rounding = recipe.rounding_for(scope) if chosen is None else chosen.get(scope)
            if rounding is not None:
                weight = subgraph.tensors[dequantized.get(op.inputs[1], op.inputs[1])]
                found.append((scope, WEIGHT_BITS.get(weight.type), rounding.bits))
    return found
