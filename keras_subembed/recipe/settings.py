"""Named compression settings, their table sizes, and the setting a size budget buys."""

import numpy as np

from keras_subembed.checks import check_bool
from keras_subembed.checks import check_positive_int
from keras_subembed.checks import is_integer
from keras_subembed.checks import is_real
from keras_subembed.quantization.fake_quantization import quantized_layers
from keras_subembed.quantization.recipes import get_recipe

PRODUCT = {"assignment": "product", "rows_per_table": 256}


def _split(head_rows, num_tables, **extra):
    return ("split", {"head_rows": head_rows,
                      "tail_kwargs": {**PRODUCT, "num_tables": num_tables, **extra}})


def _product(num_tables, rows_per_table=256, **extra):
    return ("sub", {"assignment": "product", "num_tables": num_tables,
                    "rows_per_table": rows_per_table, **extra})


# `split-*`: ids 0..N-1 exact in int8, product codes for the rest. They suit vocabularies
# numbered by probability (SentencePiece Unigram: XLM-R, multilingual-e5), whose first ids
# are the pieces every language uses most. `product-*`: product codes for every id, fitted
# to the tokens the training text uses; `reserved_ids` (the special tokens) are added from
# the model's tokenizer.
SETTINGS = {
    "split-h8k-k64": _split(8_000, 64),
    "split-h8k-k64-scaled": _split(8_000, 64, row_scales=True),
    # The same 64 bytes per tail id as k64: 128 packed 4-bit codes.
    "split-h8k-k128m16": ("split", {"head_rows": 8_000, "tail_kwargs": {
        "assignment": "product", "num_tables": 128, "rows_per_table": 16}}),
    "split-h8k-k52": _split(8_000, 52),
    "split-h16k-k56": _split(16_000, 56),
    "split-h16k-k32": _split(16_000, 32),
    "split-h32k-k32": _split(32_000, 32),
    "split-h8k-k32": _split(8_000, 32),
    "split-h8k-k24": _split(8_000, 24),
    "split-h4k-k32": _split(4_000, 32),
    "product-k64m256": _product(64),
    "product-k48m256": _product(48),
    "product-k32m256": _product(32),
    "product-k32m256-scaled": _product(32, row_scales=True),
    # Codes of a learned rotation of the table (optimized product quantization), which
    # the layer stores too (384 x 384, int8 in an int4 file: 0.15 MB, under one code's bytes).
    "product-k32m256-rotated": _product(32, rotation=True),
    # Rotated codes and one byte of length per token: the bytes of 31 rotated codes.
    "product-k30m256-rotated-scaled": _product(30, rotation=True, row_scales=True),
    "product-k30m256-rotated": _product(30, rotation=True),
    "product-k48m256-rotated": _product(48, rotation=True),
    "product-k16m256-rotated": _product(16, rotation=True),
    "product-k24m256": _product(24),
    "product-k16m256": _product(16),
    "product-k8m16": _product(8, 16),
}


# The settings a budget chooses from, best first: each is the best measured at its size
# (benchmarks/RESULTS.md), so the first that fits is taken, not the largest table.
# Measured after training on the fine evaluation (RESULTS, "The size frontier on the fine
# evaluation"): 30 rotated codes with row scales (19.9 MB, -1.95 and -2.07 in two shrinks)
# keep every language in one, the smallest file measured that does; 30 rotated codes alone (19.6 MB, -2.2) beat 32 plain
# ones (20.0 MB, -4.7), which row scales lift (20.2 MB, -3.9); 16 rotated codes (16.1 MB,
# -8.0) beat 16 plain ones (15.9 MB, -14.2); 48 rotated codes (24.1 MB, -0.5 and -1.0) beat
# 48 plain ones (24.0 MB, -1.0). On Django's set the 8,000-row head with 24 codes (20.9 MB,
# -7.0) lost to 32 plain codes (-5.0).
LADDER = ("split-h8k-k64", "product-k48m256-rotated", "split-h8k-k52", "split-h8k-k32",
          "product-k64m256", "product-k48m256", "product-k30m256-rotated-scaled",
          "product-k30m256-rotated", "product-k32m256-scaled", "product-k32m256",
          "split-h8k-k24", "product-k24m256", "product-k16m256-rotated", "product-k16m256",
          "product-k8m16")


def is_split(setting):
    return SETTINGS[setting][0] == "split"


def _code_bytes(ids, num_tables, rows_per_table):
    # Codes of at most 16 rows are packed two to a byte; up to 256, one byte each.
    per_id = num_tables / 2 if rows_per_table <= 16 else num_tables
    return int(np.ceil(ids * per_id))


def _sub_bytes(ids, width, kwargs, table_bits):
    num_tables, rows = kwargs["num_tables"], kwargs.get("rows_per_table", 256)
    # Row scales: one byte per id indexing 256 float32 levels.
    scales = ids + 256 * 4 if kwargs.get("row_scales") else 0
    # A rotation is stored at the tables' bits too (int8: one float32 scale per column).
    rotation = (width * width * table_bits // 8 + (width * 4 if table_bits == 8 else 0)
                if kwargs.get("rotation") else 0)
    return (_code_bytes(ids, num_tables, rows) + rows * width * table_bits // 8 + scales
            + rotation)


def table_bytes(setting, vocabulary_size, width, table_bits=32):
    """Bytes a setting's table stores for a `vocabulary_size x width` table: codes,
    sub-tables (float32, or `table_bits` as a quantization recipe stores them in the
    file), int8 head rows and their scales, row scales, a rotation.

    At 32 bits the count of `CompressionReport.stored_bytes`, before fitting: the budget
    is chosen before any k-means runs.

    >>> round(table_bytes("split-h8k-k64", 250_037, 384) / 1e6, 1)
    19.0
    >>> round(table_bytes("split-h8k-k64", 250_037, 384, table_bits=8) / 1e6, 1)
    18.7
    """
    if not isinstance(setting, str) or setting not in SETTINGS:
        raise ValueError(f"`setting` must be one of {sorted(SETTINGS)}. Received: {setting!r}")
    vocabulary_size = check_positive_int("vocabulary_size", vocabulary_size)
    width = check_positive_int("width", width)
    if table_bits not in (8, 16, 32) or not is_integer(table_bits):
        raise ValueError(f"`table_bits` must be 8, 16 or 32. Received: table_bits={table_bits!r}")
    kind, kwargs = SETTINGS[setting]
    if kind == "split":
        head = kwargs["head_rows"]
        return head * width + head * 4 + _sub_bytes(vocabulary_size - head, width,
                                                     kwargs["tail_kwargs"], table_bits)
    return _sub_bytes(vocabulary_size, width, kwargs, table_bits)


def transformer_bytes(embedder, recipe):
    """Bytes of everything but the token table in a file quantized by `recipe`: the
    kernels it rounds at its bits with one float32 scale per output column, the lookup
    tables (positions, segments) at its `table_bits`, every other weight in float32."""
    recipe = get_recipe(recipe, "quantization")
    table = embedder.backbone.token_embedding
    table_ids = {id(weight) for weight in table.weights}
    rounded = {}
    for layer, rounding in quantized_layers(embedder, recipe):
        kernel = layer._kernel
        # One float32 scale per output column (per-channel), or per block of inputs.
        scales = int(np.prod(kernel.shape)) // (rounding.block_size or kernel.shape[0])
        rounded[id(kernel)] = scales * 4 + int(np.prod(kernel.shape) * rounding.bits / 8)
    total = 0
    for weight in embedder.weights:
        if id(weight) in table_ids:
            continue
        bits = recipe.table_bits if recipe.table_bits and weight.path.endswith("embeddings") \
            else 32
        total += rounded.get(id(weight), int(np.prod(weight.shape)) * bits // 8)
    return total


def choose_setting(budget_bytes, embedder, recipe="int4_dynamic", ordered_vocabulary=False):
    """The first setting of `LADDER` (best first) whose file fits `budget_bytes`, and the
    estimated file bytes: `(name, estimated_bytes)`; without a budget, the ladder's first.

    `split-*` settings are considered only for an `ordered_vocabulary` (ids by
    probability). A ValueError names the smallest file possible when none fits.
    """
    if budget_bytes is not None and (not is_real(budget_bytes) or not budget_bytes > 0
                                     or not np.isfinite(budget_bytes)):
        raise ValueError(f"`budget_bytes` must be a positive number. Received: {budget_bytes!r}")
    recipe = get_recipe(recipe, "recipe").name
    ordered_vocabulary = check_bool("ordered_vocabulary", ordered_vocabulary)
    vocabulary_size, width = embedder.backbone.token_embedding.input_dim, \
        embedder.backbone.token_embedding.output_dim
    rest = transformer_bytes(embedder, recipe)
    bits = get_recipe(recipe, "quantization").table_bits or 32
    sizes = {name: rest + table_bytes(name, vocabulary_size, width, bits) for name in LADDER
             if ordered_vocabulary or not is_split(name)}
    fitting = [name for name, size in sizes.items()
               if budget_bytes is None or size <= budget_bytes]
    if not fitting:
        smallest = min(sizes, key=sizes.get)
        raise ValueError(
            f"No setting fits a budget of {budget_bytes / 1e6:.1f} MB: the transformer alone "
            f"takes {rest / 1e6:.1f} MB at {recipe}, and the smallest setting ({smallest}) "
            f"makes a {sizes[smallest] / 1e6:.1f} MB file.")
    return fitting[0], sizes[fitting[0]]
