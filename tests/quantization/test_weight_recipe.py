"""`WeightRecipe`: which rounding each kernel path gets (the last matching rule), and its
config as JSON and back."""

import json

from keras_subembed.quantization.kernel_rounding import KernelRounding
from keras_subembed.quantization.weight_recipe import WeightRecipe

INT4, INT8, INT2 = KernelRounding(4, clipping="mse"), KernelRounding(8), KernelRounding(2, 16)


def recipe():
    return WeightRecipe("mine", INT4, "dynamic",
                        overrides=[("query", INT8), ("self_attention/query", INT2)],
                        description="two overrides", table_bits=8)


def test_the_last_matching_override_wins_inside_a_transformer_layer_only():
    mine = recipe()
    assert mine.rounding_for("transformer_layer_0/self_attention/query/kernel") == INT2
    assert mine.rounding_for("transformer_layer_0/cross_attention/query/kernel") == INT8
    assert mine.rounding_for("transformer_layer_0/feedforward_output_dense/kernel") == INT4
    # A `query` outside every transformer layer takes the recipe's own rounding.
    assert mine.rounding_for("pooler/query/kernel") == INT4
    assert mine.scopes()[0] == ("", INT4) and len(mine.scopes()) == 3


def test_the_config_goes_through_json_and_back():
    mine = recipe()
    assert mine.overrides == (("query", INT8), ("self_attention/query", INT2))  # a list, kept as tuples
    config = json.loads(json.dumps(mine.get_config()))
    assert WeightRecipe.from_config(config) == mine
