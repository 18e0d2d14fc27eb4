"""Per-token weights in product codes and least-squares sub-tables."""

import numpy as np
import pytest

from keras_subembed.assignment import least_squares_sub_tables
from keras_subembed.assignment import product_codes
from keras_subembed.assignment import reconstruction_quality
from keras_subembed.layers import SubEmbedding

RESERVED = (0, 3, 99)


def two_populations(num_ids=1200, width=16, heavy=100, seed=0):
    """Many light tokens spread widely, a few heavy ones in their own tight clusters."""
    rng = np.random.default_rng(seed)
    table = rng.normal(size=(num_ids, width)).astype("float32")
    centers = 3 * rng.normal(size=(10, width))
    table[:heavy] = centers[rng.integers(0, 10, heavy)] + 0.05 * rng.normal(size=(heavy, width))
    weights = np.ones(num_ids)
    weights[:heavy] = 1000.0
    return table, weights


def heavy_error(table, layer, heavy=100):
    rebuilt = np.asarray(layer.embedding_table())
    return float(np.mean((rebuilt[:heavy] - table[:heavy]) ** 2))


def test_weights_pull_centroids_toward_heavy_tokens():
    table, weights = two_populations()
    kwargs = dict(num_tables=4, rows_per_table=8, reserved_ids=RESERVED)
    plain = SubEmbedding.from_pretrained(table, **kwargs)
    weighted = SubEmbedding.from_pretrained(table, token_weights=weights, **kwargs)
    # The heavy tokens' error more than halves; the light ones pay for it.
    assert heavy_error(table, weighted) < 0.5 * heavy_error(table, plain)
    light = slice(100, None)
    assert (reconstruction_quality(table[light], np.asarray(weighted.embedding_table())[light])["mse"]
            > reconstruction_quality(table[light], np.asarray(plain.embedding_table())[light])["mse"])


def test_equal_weights_give_the_unweighted_codes():
    table, _ = two_populations()
    np.testing.assert_array_equal(
        product_codes(table, 4, 8, token_weights=np.full(len(table), 2.5)), product_codes(table, 4, 8)
    )


def test_weighted_least_squares_rows_are_weighted_means():
    table = np.arange(12, dtype="float32").reshape(6, 2)
    codes = np.array([[0], [0], [1], [1], [1], [2]])
    weights = np.array([1.0, 3.0, 0.0, 0.0, 0.0, 2.0])
    (rows,) = least_squares_sub_tables(table, codes, 4, [2], weights)
    np.testing.assert_allclose(rows[0], (table[0] + 3 * table[1]) / 4)
    # A row whose tokens all weigh zero takes their plain mean; an unused row stays zero.
    np.testing.assert_allclose(rows[1], table[2:5].mean(axis=0))
    np.testing.assert_allclose(rows[2], table[5])
    np.testing.assert_array_equal(rows[3], [0, 0])


def test_zero_weight_tokens_still_get_codes_and_reserved_rows_stay_exact():
    table, weights = two_populations()
    weights[500:] = 0.0
    layer = SubEmbedding.from_pretrained(
        table, num_tables=4, rows_per_table=8, reserved_ids=RESERVED, token_weights=weights
    )
    codes = layer.code_array()
    assert codes.shape == (1200, 4) and codes[500:].min() >= len(RESERVED)
    np.testing.assert_array_equal(np.asarray(layer.embedding_table())[list(RESERVED)], table[list(RESERVED)])


def test_a_sample_of_centroids_codes_large_tables_nearly_as_well():
    rng = np.random.default_rng(1)
    table = rng.normal(size=(20_000, 8)).astype("float32")
    full = product_codes(table, 2, 16, max_points_per_center=10_000)
    sampled = product_codes(table, 2, 16, max_points_per_center=20)  # 320 of 20,000 points fit
    np.testing.assert_array_equal(sampled, product_codes(table, 2, 16, max_points_per_center=20))

    def error(codes):
        rows = least_squares_sub_tables(table, codes, 16, [4, 4])
        rebuilt = np.concatenate([rows[k][codes[:, k]] for k in range(2)], axis=1)
        return reconstruction_quality(table, rebuilt)["mse"]

    assert error(sampled) < 1.1 * error(full)


@pytest.mark.parametrize(
    "weights, message",
    [
        (np.ones(1199), r"`token_weights` must have shape \(1200,\).*Received shape \(1199,\)"),
        (np.ones((1200, 1)), r"`token_weights` must have shape \(1200,\).*Received shape \(1200, 1\)"),
        (np.r_[np.ones(1199), -1.0], r"`token_weights` must be finite and >= 0. Bad values at ids 1199 \(-1.0\)"),
        (np.r_[np.nan, np.ones(1199)], r"`token_weights` must be finite and >= 0. Bad values at ids 0 \(nan\)"),
        (np.r_[np.inf, np.ones(1199)], r"Bad values at ids 0 \(inf\)"),
        (np.zeros(1200), r"`token_weights` are all zero"),
        (np.array(["a"] * 1200), r"`token_weights` must be a numeric array .* dtype <U1"),
        (np.ones(1200, dtype=bool), r"`token_weights` must be a numeric array .* dtype bool"),
    ],
)
def test_bad_weights_are_named(weights, message):
    table, _ = two_populations()
    with pytest.raises(ValueError, match=message):
        product_codes(table, 4, 8, token_weights=weights)


def test_weights_only_on_reserved_ids_are_refused():
    table, _ = two_populations()
    weights = np.zeros(1200)
    weights[list(RESERVED)] = 1.0
    with pytest.raises(ValueError, match=r"`token_weights` are zero for every ordinary \(not reserved\) id"):
        product_codes(table, 4, 8, reserved_ids=RESERVED, token_weights=weights)


def test_from_pretrained_names_token_weights():
    table, _ = two_populations()
    with pytest.raises(ValueError, match=r"`token_weights` must be finite and >= 0"):
        SubEmbedding.from_pretrained(table, token_weights=-np.ones(1200))
    with pytest.raises(ValueError, match=r"`max_points_per_center` must be a positive integer"):
        product_codes(table, 4, 8, max_points_per_center=0)


def test_from_pretrained_defaults_to_one_byte_product_codes_per_12_columns():
    table, _ = two_populations(width=48)
    layer = SubEmbedding.from_pretrained(table)
    assert (layer.num_tables, layer.rows_per_table, layer.assignment) == (4, 256, "explicit")
    assert layer.compression_report().shared_code_tokens is not None
    assert not layer.distinct_codes
