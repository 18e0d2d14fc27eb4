"""Named settings: table bytes counted before fitting, and the setting a budget buys."""

import keras_hub
import numpy as np
import pytest

import keras_subembed
from keras_subembed.recipe import settings
from keras_subembed.recipe.settings import LADDER
from keras_subembed.recipe.settings import SETTINGS
from keras_subembed.recipe.settings import choose_setting
from keras_subembed.recipe.settings import table_bytes
from keras_subembed.recipe.settings import transformer_bytes


def tiny_embedder(vocabulary_size=600, width=32):
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [
        f"w{i}" for i in range(vocabulary_size - 5)]
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=vocabulary)
    backbone = keras_hub.models.BertBackbone(vocabulary_size, 2, 2, width, 64,
                                             max_sequence_length=16)
    preprocessor = keras_hub.models.BertTextEmbedderPreprocessor(tokenizer, sequence_length=16)
    return keras_hub.models.BertTextEmbedder(backbone, preprocessor)


@pytest.mark.parametrize("setting", [
    ("split", {"head_rows": 100, "tail_kwargs": {"assignment": "product", "num_tables": 8,
                                                 "rows_per_table": 16}}),
    ("sub", {"assignment": "product", "num_tables": 8, "rows_per_table": 16}),
    ("sub", {"assignment": "product", "num_tables": 4, "rows_per_table": 64,
             "row_scales": True}),
    ("sub", {"assignment": "product", "num_tables": 8, "rows_per_table": 16,
             "rotation": True}),
    ("sub", {"assignment": "product", "num_tables": 8, "rows_per_table": 16,
             "rotation": True, "row_scales": True}),
])
def test_table_bytes_are_what_the_fitted_layer_stores(setting, monkeypatch):
    embedder = tiny_embedder()
    monkeypatch.setitem(SETTINGS, "probe", setting)
    student = keras_subembed.compress(embedder, *setting)
    stored = student.backbone.token_embedding.compression_report().stored_bytes
    assert table_bytes("probe", 600, 32) == stored


def test_a_file_stores_a_rotation_at_the_tables_bits():
    # float32 in Keras; int8 with one float32 scale per column where the tables are int8.
    extra = {bits: table_bytes("product-k32m256-rotated", 1_000, 64, bits)
             - table_bytes("product-k32m256", 1_000, 64, bits) for bits in (32, 16, 8)}
    assert extra == {32: 64 * 64 * 4, 16: 64 * 64 * 2, 8: 64 * 64 + 64 * 4}


def test_the_budget_buys_the_first_setting_of_the_ladder_that_fits():
    embedder = tiny_embedder(vocabulary_size=20_000, width=64)
    rest = transformer_bytes(embedder, "int4_dynamic")
    # int4 kernels (half a byte) and their scales, every other weight float32.
    assert 0 < rest < sum(int(np.prod(w.shape)) * 4 for w in embedder.weights
                          if w.path.startswith("bert_backbone/token_embedding") is False)
    best, size = choose_setting(None, embedder, ordered_vocabulary=True)
    # The file stores the sub-tables in int8, as int4_dynamic does.
    assert best == LADDER[0] and size == rest + table_bytes(LADDER[0], 20_000, 64, 8)
    assert table_bytes(LADDER[0], 20_000, 64, 8) < table_bytes(LADDER[0], 20_000, 64)
    product, _ = choose_setting(None, embedder)  # WordPiece: no split settings
    assert product.startswith("product-")
    small, small_size = choose_setting(rest + table_bytes("product-k16m256", 20_000, 64, 8),
                                       embedder)
    assert small == "product-k16m256" and small_size == rest + table_bytes(
        "product-k16m256", 20_000, 64, 8)
    with pytest.raises(ValueError, match="No setting fits a budget of 0.0 MB"):
        choose_setting(rest / 2, embedder)
    for bad in (0, -3, float("nan"), "30"):
        with pytest.raises(ValueError, match="`budget_bytes` must be a positive number"):
            choose_setting(bad, embedder)
    with pytest.raises(ValueError, match="`setting` must be one of"):
        table_bytes("bogus", 10, 4)
    assert set(LADDER) <= set(SETTINGS) and settings.is_split("split-h8k-k64")
