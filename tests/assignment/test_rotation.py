import numpy as np
import pytest

from keras_subembed.assignment import least_squares_sub_tables
from keras_subembed.assignment import product_codes
from keras_subembed.assignment import product_rotation
from keras_subembed.assignment import sub_widths


def correlated_table(rows=2000, width=16, seed=0):
    rng = np.random.default_rng(seed)
    table = (rng.normal(size=(rows, width)) * np.linspace(3, 0.2, width)) @ rng.normal(
        size=(width, width))
    return table.astype("float32")


def rebuild_error(table, rotation, num_tables, rows_per_table):
    rotated = table @ rotation
    codes = product_codes(rotated, num_tables, rows_per_table, seed=0)
    sub_tables = least_squares_sub_tables(rotated, codes, rows_per_table,
                                          sub_widths(table.shape[1], num_tables))
    rebuilt = np.concatenate([sub[codes[:, k]] for k, sub in enumerate(sub_tables)], axis=1)
    return float(np.sum((rebuilt @ rotation.T - table) ** 2) / np.sum(table**2))


def test_the_rotation_is_orthogonal_deterministic_and_lowers_the_rebuild_error():
    table = correlated_table()
    rotation = product_rotation(table, num_tables=4, rows_per_table=16, seed=3)
    assert rotation.shape == (16, 16) and rotation.dtype == np.float32
    np.testing.assert_allclose(rotation @ rotation.T, np.eye(16), atol=1e-5)
    np.testing.assert_array_equal(
        rotation, product_rotation(table, num_tables=4, rows_per_table=16, seed=3))
    plain = rebuild_error(table, np.eye(16, dtype="float32"), 4, 16)
    allocated = rebuild_error(
        table, product_rotation(table, 4, 16, iterations=0), 4, 16)
    fitted = rebuild_error(table, rotation, 4, 16)
    # Measured: plain 0.33, the allocated PCA basis 0.15, after six rounds 0.14.
    assert allocated < 0.6 * plain
    assert fitted <= allocated * 1.02


def test_eigenvalue_allocation_balances_the_chunks_variance():
    # Independent columns of falling variance: the allocated basis is a permutation (up to
    # sign) that pairs large with small, instead of the two largest in the first chunk.
    rng = np.random.default_rng(1)
    table = (rng.normal(size=(20000, 8)) * [8, 7, 6, 5, 4, 3, 2, 1]).astype("float32")
    rotation = product_rotation(table, num_tables=4, rows_per_table=16, iterations=0)
    np.testing.assert_allclose(np.abs(rotation).max(axis=0), 1, atol=0.05)
    spread = (table @ rotation).var(axis=0).reshape(4, 2).prod(axis=1)
    # Allocated: (8*1, 7*2, 6*3, 5*4)^2, a ratio of 6.25; unrotated (8*7)^2 / (2*1)^2 = 784.
    assert spread.max() / spread.min() < 10


def test_weights_and_reserved_ids_are_checked_and_reserved_rows_are_not_sampled():
    table = correlated_table(rows=300, width=8)
    weights = np.ones(300)
    weights[5] = np.nan
    with pytest.raises(ValueError, match="token_weights"):
        product_rotation(table, 2, 8, token_weights=weights)
    with pytest.raises(ValueError, match="reserved_ids"):
        product_rotation(table, 2, 8, reserved_ids=(300,))
    # A huge reserved row would dominate the covariance if it were sampled.
    spiked = table.copy()
    spiked[0] = 1e4
    np.testing.assert_allclose(
        np.abs(product_rotation(spiked, 2, 8, reserved_ids=(0,), iterations=1)),
        np.abs(product_rotation(table, 2, 8, reserved_ids=(0,), iterations=1)), atol=1e-5)


@pytest.mark.parametrize("kwargs, message", [
    (dict(num_tables=9), r"`num_tables` cannot exceed the table's width. Received: "
                         r"num_tables=9, width=8"),
    (dict(num_tables=2, iterations=-1), r"`iterations` must be an integer >= 0"),
    (dict(num_tables=2, iterations=1.5), r"`iterations` must be an integer >= 0"),
    (dict(num_tables=2, sample_size=0), r"`sample_size` must be a positive integer"),
    (dict(num_tables=2, rows_per_table="16"), r"`rows_per_table` must be a positive integer"),
])
def test_bad_arguments_name_themselves(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        product_rotation(correlated_table(rows=100, width=8), **kwargs)


def test_the_rotation_does_not_depend_on_the_scale_of_the_table_or_the_weights():
    # Variances below 1 once gave negative logs, and the first chunk took every large one.
    table = correlated_table(rows=800, width=16)
    rotation = product_rotation(table, 4, 16, iterations=0)
    for scaled, weights in [(table * 1e-4, None), (table, np.full(800, 1e-9))]:
        np.testing.assert_allclose(
            np.abs(product_rotation(scaled, 4, 16, token_weights=weights, iterations=0)),
            np.abs(rotation), atol=1e-4)


def test_rows_of_weight_zero_are_not_sampled_and_all_zero_is_refused():
    table = correlated_table(rows=300, width=8)
    weights = np.zeros(300)
    weights[:3] = 1
    with pytest.raises(ValueError, match=r"`token_weights` are zero for every ordinary \(not "
                                         r"reserved\) id: the rotation has no row to fit"):
        product_rotation(table, 2, 8, token_weights=weights, reserved_ids=(0, 1, 2))
    # A sample of 30 of 5,000 rows, 100 of them weighted: only weighted rows are drawn.
    big = correlated_table(rows=5000, width=8)
    weights = np.zeros(5000)
    weights[np.random.default_rng(0).choice(5000, 100, replace=False)] = 1
    rotation = product_rotation(big, 2, 8, token_weights=weights, sample_size=30, iterations=1)
    np.testing.assert_allclose(rotation @ rotation.T, np.eye(8), atol=1e-5)


def test_every_id_reserved_is_refused_by_name():
    with pytest.raises(ValueError, match=r"`reserved_ids` hold every one of the table's 4 ids: "
                                         r"no ordinary id is left"):
        product_rotation(correlated_table(rows=4, width=8), 2, 16, reserved_ids=(0, 1, 2, 3))


def test_a_table_with_nan_is_refused():
    table = correlated_table(rows=100, width=8)
    table[3, 2] = np.nan
    with pytest.raises(ValueError, match="table"):
        product_rotation(table, 2, 8)
