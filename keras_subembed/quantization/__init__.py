"""Int4 / int8 transformer kernels: the recipes, their rounding (nearest, or
GPTQ with calibration data), and training with it (shared by `models.EmbeddingDistiller` and `export`)."""

from keras_subembed.quantization.fake_quantization import fake_quantized
from keras_subembed.quantization.fake_quantization import quantized_layers
from keras_subembed.quantization.fake_quantization import round_weights
from keras_subembed.quantization.gptq_rounding import gptq_round_weights
from keras_subembed.quantization.kernel_rounding import KernelRounding
from keras_subembed.quantization.kernel_rounding import round_kernel
from keras_subembed.quantization.recipes import RECIPE_NAMES
from keras_subembed.quantization.recipes import RECIPES
from keras_subembed.quantization.recipes import get_recipe
from keras_subembed.quantization.weight_recipe import TRANSFORMER_SCOPE
from keras_subembed.quantization.weight_recipe import WeightRecipe

__all__ = [
    "KernelRounding",
    "RECIPES",
    "RECIPE_NAMES",
    "TRANSFORMER_SCOPE",
    "WeightRecipe",
    "fake_quantized",
    "get_recipe",
    "gptq_round_weights",
    "quantized_layers",
    "round_kernel",
    "round_weights",
]
