"""The examples in the public docstrings run and print what they say.

Only modules whose examples are cheap (tiny tables and layers, no model
download, no `.tflite` conversion) are listed; together they take a few
seconds.
"""

import doctest
import importlib
import os
import tempfile

import keras
import keras_hub
import numpy as np
import pytest

import keras_subembed

MODULES = [
    "keras_subembed.recipe.settings",
    "keras_subembed.datasets.training_pairs",
    "keras_subembed.evaluation.language_report",
    "keras_subembed.layer_walk",
    "keras_subembed.assignment.clustered",
    "keras_subembed.assignment.code_space",
    "keras_subembed.assignment.digits",
    "keras_subembed.assignment.packing",
    "keras_subembed.assignment.product",
    "keras_subembed.assignment.random_codes",
    "keras_subembed.assignment.registry",
    "keras_subembed.assignment.scale_levels",
    "keras_subembed.layers.alone_embedding",
    "keras_subembed.layers.compressed_embedding",
    "keras_subembed.layers.compression_report",
    "keras_subembed.layers.define_embedding",
    "keras_subembed.layers.embedding_kinds",
    "keras_subembed.tokenizer_kinds.registry",
    "keras_subembed.layers.group_linear",
    "keras_subembed.layers.positional_token_embedding",
    "keras_subembed.layers.sub_embedding",
    "keras_subembed.quantization.fake_quantization",
    "keras_subembed.quantization.gptq_rounding",
    "keras_subembed.models.compressed_bert_backbone",
    "keras_subembed.models.compressed_bert_text_embedder",
    "keras_subembed.models.compressed_xlm_roberta_backbone",
    "keras_subembed.models.compressed_xlm_roberta_text_embedder",
    "keras_subembed.models.distillation_dataset",
    "keras_subembed.models.sentence_vectors",
    "keras_subembed.models.token_embedding",
    "keras_subembed.evaluation.metrics",
    "keras_subembed.evaluation.retrieval",
    "keras_subembed.datasets.sentencepiece_model",
    "keras_subembed.datasets.sentence_split",
    "keras_subembed.datasets.translation_catalogs",
    "keras_subembed.evaluation.results_table",
    "keras_subembed.evaluation.tokenized_texts",
]


@pytest.mark.parametrize("name", MODULES, ids=lambda name: name.split(".", 1)[1])
def test_docstring_examples_run(name):
    # `importlib`: `keras_subembed.assignment.random_codes` is also a function's name.
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, extraglobs={"np": np, "keras": keras, "keras_hub": keras_hub, "os": os,
                            "tempfile": tempfile, "keras_subembed": keras_subembed},
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, raise_on_error=False,
    )
    assert result.attempted > 0
    assert result.failed == 0
