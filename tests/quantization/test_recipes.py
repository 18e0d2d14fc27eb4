"""The named weight recipes: looked up by name (the argument named when unknown), and
their overrides aimed at keras-hub's layer paths."""

import pytest

from keras_subembed.quantization.recipes import INT4
from keras_subembed.quantization.recipes import INT4_BLOCK32
from keras_subembed.quantization.recipes import INT8
from keras_subembed.quantization.recipes import RECIPE_NAMES
from keras_subembed.quantization.recipes import RECIPES
from keras_subembed.quantization.recipes import get_recipe
from keras_subembed.quantization.weight_recipe import WeightRecipe

# keras-hub's kernel paths inside a BERT backbone's transformer layer.
LAYER = "bert_backbone/transformer_layer_3/"
QUERY = LAYER + "self_attention/query/kernel"
ATTENTION_OUTPUT = LAYER + "self_attention/attention_output/kernel"
INTERMEDIATE = LAYER + "feedforward_intermediate_dense/kernel"
FEEDFORWARD_OUTPUT = LAYER + "feedforward_output_dense/kernel"


def test_names_are_looked_up_and_a_recipe_passes_through():
    assert RECIPE_NAMES == tuple(sorted(RECIPES))
    assert get_recipe("int4_dynamic").name == "int4_dynamic"
    mine = WeightRecipe("mine", INT8, "float")
    assert get_recipe(mine) is mine
    with pytest.raises(ValueError, match=r"`quantization` must be one of the weight quantization "
                                         r"recipes int4_blockwise32_dynamic, .*int8_weight_only\. "
                                         r"Received: quantization='int3'"):
        get_recipe("int3", argument="quantization")
    with pytest.raises(ValueError, match=r"`recipe` must be one .*Received: recipe=None"):
        get_recipe(None)


def test_each_override_reaches_its_projection_and_only_it():
    feedforward = RECIPES["int4_dynamic_int8_feedforward_output"]
    assert feedforward.rounding_for(FEEDFORWARD_OUTPUT) == INT8
    assert [feedforward.rounding_for(p) for p in (QUERY, ATTENTION_OUTPUT, INTERMEDIATE)] == [INT4] * 3
    attention = RECIPES["int4_blockwise32_dynamic_int8_attention_output"]
    assert attention.rounding_for(ATTENTION_OUTPUT) == INT8
    # TensorFlow's op scopes add `_<n>` to each name: the override still applies.
    assert attention.rounding_for("model/transformer_layer_3_1/self_attention_1/"
                                  "attention_output_2/MatMul") == INT8
    assert [attention.rounding_for(p) for p in (QUERY, FEEDFORWARD_OUTPUT)] == [INT4_BLOCK32] * 2


def test_integer_compute_recipes_store_int8_tables_and_weight_only_ones_float():
    for name, recipe in RECIPES.items():
        assert recipe.table_bits == (8 if recipe.activations == "dynamic" else None), name
