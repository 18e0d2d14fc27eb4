"""The weight quantization recipes, shared by training and export.

`keras_subembed.export` turns a recipe into an `ai-edge-quantizer` recipe for
the `.tflite` file; training (`EmbeddingDistiller(quantize_transformer=...)`)
runs the student with its kernels rounded the same way (`fake_quantized`).
The dynamic recipes also store the float lookup tables the file reads with
`GATHER` / `SLICE` (a compressed embedding's sub-tables, the position
table) as int8 with one scale per column (`table_bits=8`), and a compressed
embedding's rotation as an int8 matmul weight; training does not round them
(int8 per column changes the sentence vectors by under 1e-4 cosine).
"""

from keras_subembed.quantization.kernel_rounding import KernelRounding
from keras_subembed.quantization.weight_recipe import WeightRecipe

ATTENTION_OUTPUT_SCOPE = r"/attention_output(_\d+)?/"
# keras-hub names it directly under the transformer layer: no "/" of its own before it.
FEEDFORWARD_OUTPUT_SCOPE = r"feedforward_output_dense(_\d+)?/"

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
    WeightRecipe("int4_dynamic_int8_feedforward_output", INT4, "dynamic",
                 overrides=((FEEDFORWARD_OUTPUT_SCOPE, INT8),), table_bits=8,
                 description="int4_dynamic, feed-forward output projections in int8"),
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


RECIPE_NAMES = tuple(sorted(RECIPES))
