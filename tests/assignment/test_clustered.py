import numpy as np
import pytest

from keras_subembed.assignment import check_codes
from keras_subembed.assignment import clustered_codes
from keras_subembed.assignment import random_codes
from keras_subembed.assignment import reconstruction_quality
from keras_subembed.assignment.clustered import capacitated_assignment
from keras_subembed.layers import SubEmbedding
from tests.layers.layer_contract import assert_float32_close


def clustered_table(num_ids=2000, num_clusters=20, width=24, noise=0.1, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(num_clusters, width))
    truth = rng.integers(0, num_clusters, num_ids)
    table = centers[truth] + noise * rng.normal(size=(num_ids, width))
    return table.astype("float32"), truth


@pytest.mark.parametrize(
    "num_ids, num_tables, rows",
    [(2000, 2, 45), (2000, 3, 13), (512, 3, 8), (1000, 1, 1000)],  # 512 = 8^3: tight
)
def test_codes_are_distinct_and_in_range(num_ids, num_tables, rows):
    table, _ = clustered_table(num_ids)
    codes = clustered_codes(table, num_tables, rows)
    check_codes(codes, rows, num_ids, num_tables)


def test_structured_and_unstructured_tables_tight_capacity_unbalanced():
    rng = np.random.default_rng(1)
    # 90% of the rows sit in one tight blob: plain k-means overflows, repair must fix it.
    table = np.concatenate([rng.normal(size=(900, 8)) * 0.01, rng.normal(size=(100, 8))]).astype("float32")
    codes = clustered_codes(table, 2, 32, balanced=False)  # 32^2 = 1024 >= 1000
    check_codes(codes, 32)


def test_deterministic_for_a_seed():
    table, _ = clustered_table()
    first = clustered_codes(table, 3, 13, seed=5)
    np.testing.assert_array_equal(first, clustered_codes(table, 3, 13, seed=5))
    assert (first != clustered_codes(table, 3, 13, seed=6)).any()


def test_balanced_levels_respect_equal_size_capacity():
    table, _ = clustered_table(2000)
    codes = clustered_codes(table, 3, 13, balanced=True)
    level_one = np.bincount(codes[:, 0], minlength=13)
    assert level_one.max() <= int(np.ceil(2000 / 13))
    for prefix in np.unique(codes[:, 0]):
        members = codes[codes[:, 0] == prefix]
        capacity = int(np.ceil(len(members) / 13))
        assert np.bincount(members[:, 1]).max() <= capacity


def test_reserved_ids_get_reserved_codes():
    table, _ = clustered_table(2000)
    reserved = (0, 5, 1999)
    codes = clustered_codes(table, 2, 47, reserved_ids=reserved)
    check_codes(codes, 47)
    for slot, token in enumerate(reserved):
        assert codes[token].tolist() == [slot, slot]
    assert np.delete(codes, reserved, axis=0)[:, 0].min() >= len(reserved)


def shared_codes(codes, pairs):
    return (codes[pairs[:, 0]] == codes[pairs[:, 1]]).sum(axis=1).mean()


def test_near_neighbours_share_more_codes_than_with_random_codes():
    table, truth = clustered_table(2000, num_clusters=20)
    rng = np.random.default_rng(0)
    pairs = rng.integers(0, 2000, size=(20_000, 2))
    same = pairs[(truth[pairs[:, 0]] == truth[pairs[:, 1]]) & (pairs[:, 0] != pairs[:, 1])]
    clustered = clustered_codes(table, 3, 13)
    random = random_codes(2000, 3, 13, seed=0)
    assert shared_codes(clustered, same) > 0.9  # same true cluster: same level-1 code
    assert shared_codes(random, same) < 0.4
    assert shared_codes(clustered, same) > 3 * shared_codes(random, same)


def test_capacitated_assignment_takes_nearest_with_room():
    distances = np.array([[0.0, 1.0], [0.1, 2.0], [0.2, 0.3]])
    np.testing.assert_array_equal(capacitated_assignment(distances, 2), [0, 0, 1])
    np.testing.assert_array_equal(capacitated_assignment(distances[:2], 1), [0, 1])
    with pytest.raises(ValueError, match="do not fit"):
        capacitated_assignment(distances, 1)


@pytest.mark.parametrize(
    "table, kwargs, message",
    [
        (np.array([[0.0, np.nan], [1.0, 2.0], [1.0, np.inf]]), {}, r"NaN or infinite values in rows \[0, 2\]"),
        (np.zeros((4, 2), dtype=int), {}, "floating-point values. Received dtype int64"),
        (np.zeros(4), {}, r"2-D \(vocabulary, width\).*\(4,\)"),
        # Finite in float32, but the squares overflow: k-means would make garbage codes.
        (np.concatenate([np.random.rand(8, 2), [[1e30, -1e30]]]).astype("float32"), {},
         r"values too large to compare in float32 .* largest \|value\| 1e\+30\) in rows \[8\]"),
        (np.random.rand(30, 2), dict(rows_per_table=3), r"rows_per_table=3.*smallest rows_per_table that works is 4"),
        (np.random.rand(8, 2), dict(rows_per_table=2, reserved_ids=(0, 1)), r"2 reserved ids.*works is 3"),
        (np.random.rand(8, 2), dict(metric="manhattan"), r"metric='manhattan'"),
        (np.random.rand(8, 2), dict(num_tables=0), r"num_tables=0"),
    ],
)
def test_bad_input_raises_with_the_reason(table, kwargs, message):
    arguments = dict(num_tables=3)
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=message):
        clustered_codes(table, **arguments)


def test_a_bfloat16_table_is_a_float_table():
    import ml_dtypes

    table = np.random.default_rng(0).normal(size=(40, 4)).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(clustered_codes(table, num_tables=2),
                                  clustered_codes(table.astype("float32"), num_tables=2))


# --- SubEmbedding.from_pretrained ------------------------------------------------


def test_from_pretrained_clustered_rebuilds_best():
    table, _ = clustered_table(2000)
    quality = {}
    for assignment in ("clustered", "digits", "random"):
        layer = SubEmbedding.from_pretrained(table, num_tables=2, assignment=assignment)
        quality[assignment] = reconstruction_quality(table, layer.embedding_table())
    assert quality["clustered"]["relative_error"] < 0.8 * quality["random"]["relative_error"]
    assert quality["clustered"]["relative_error"] < 0.8 * quality["digits"]["relative_error"]
    assert quality["clustered"]["mean_cosine"] > quality["random"]["mean_cosine"] + 0.2


def test_from_pretrained_rows_are_least_squares_means():
    table, _ = clustered_table(500, width=10)
    layer = SubEmbedding.from_pretrained(table, num_tables=3, reserved_ids=(0,))
    codes = layer.code_array()
    widths = layer.sub_widths  # [4, 3, 3]
    start = widths[0]
    members = codes[:, 1] == codes[7, 1]
    # A mean of the members' columns, summed in another order (and precision).
    assert_float32_close(
        np.asarray(layer.sub_tables[1])[codes[7, 1]],
        table[members, start : start + widths[1]].mean(axis=0),
        reduction_length=members.sum(),
    )
    # The least-squares fit beats any perturbation of it.
    error = reconstruction_quality(table, layer.embedding_table())["mse"]
    layer.sub_tables[0].assign(np.asarray(layer.sub_tables[0]) + 0.01)
    assert reconstruction_quality(table, layer.embedding_table())["mse"] > error


def test_from_pretrained_validates_sizes_and_assignment():
    table, _ = clustered_table(100, width=8)
    with pytest.raises(ValueError, match=r"`input_dim=99` does not match the table.s rows \(100\)"):
        SubEmbedding.from_pretrained(table, input_dim=99)
    with pytest.raises(ValueError, match=r"`output_dim=9` does not match the table.s width \(8\)"):
        SubEmbedding.from_pretrained(table, output_dim=9)
    with pytest.raises(ValueError, match=r"assignment='kmeans'"):
        SubEmbedding.from_pretrained(table, assignment="kmeans")
    with pytest.raises(ValueError, match=r"`table` has NaN"):
        SubEmbedding.from_pretrained(np.full((4, 2), np.nan))
