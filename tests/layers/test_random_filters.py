"""The one (keras.ops) implementation of ALONE's filters against an independent NumPy reference."""

import numpy as np
import pytest

from keras_subembed.layers import ALONEEmbedding
from keras_subembed.layers import random_filters
from tests.layers import random_filters_reference as reference


@pytest.mark.parametrize("seed", [0, 1234, 2**32 - 1])
def test_keys_computed_eagerly_equal_the_reference(seed):
    keys = random_filters.filter_keys(seed, num_source_matrices=5, base_dim=7)
    want = reference.filter_keys(seed, 5, 7)
    assert keys.rows == want["rows"]
    for name in ("row_salts", "entry_salts", "columns"):
        np.testing.assert_array_equal(getattr(keys, name), want[name])


@pytest.mark.parametrize("filter_kind", ["binary", "real"])
def test_stored_weights_equal_the_reference_bit_for_bit(filter_kind):
    # Few ids: 5 rows in each of 3 matrices give only 125 distinct filters (issue 20 item 12).
    layer = ALONEEmbedding(12, 8, base_dim=12, num_source_matrices=3, source_columns=5,
                           filter_kind=filter_kind, volatile=False, seed=9)
    layer.build()
    ids = np.arange(12)
    np.testing.assert_array_equal(
        layer.stored_row_choices, reference.row_choices(ids, layer._keys, 5))
    rows = np.broadcast_to(np.arange(5)[:, None], (5, 3))
    entries = reference.entry_values(reference.source_entries(rows, layer._keys), filter_kind,
                                     layer._threshold)
    np.testing.assert_array_equal(
        layer.stored_sources, entries.transpose(1, 0, 2).reshape(-1, 12))
    np.testing.assert_array_equal(layer.filters(ids), reference.filters(layer, ids))
