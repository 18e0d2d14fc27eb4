"""Issue 20 item 12: ALONE settings whose filters collapse are refused at construction."""

import re

import numpy as np
import pytest

from keras_subembed.layers import ALONEEmbedding


def distinct_share(layer, count=2048):
    ids = np.arange(min(layer.input_dim, count))
    filters = np.asarray(layer.filters(ids))
    return len(np.unique(filters, axis=0)) / len(ids)


@pytest.mark.parametrize("kwargs, share", [
    (dict(p0=0.99), "100%"),  # 10 distinct filters out of 50 before
    (dict(num_source_matrices=1), "54%"),  # 38 distinct out of 50: only 64 rows to draw
])
def test_collapsing_filters_are_refused(kwargs, share):
    with pytest.raises(ValueError, match=re.escape(
            f"These ALONE settings collapse the filters: about {share} of the 50 ids would "
            "share their filter (so their vector) with another id.")):
        ALONEEmbedding(50, 16, seed=0, **kwargs)


def test_the_refusal_names_every_setting():
    with pytest.raises(ValueError, match=re.escape(
            "Received: p0=0.99, base_dim=16, num_source_matrices=8, source_columns=64, "
            "filter_kind='binary'")):
        ALONEEmbedding(50, 16, p0=0.99, seed=0)


@pytest.mark.parametrize("kwargs", [
    dict(input_dim=500, output_dim=16),
    dict(input_dim=100, output_dim=12),
    dict(input_dim=30_522, output_dim=32),
    dict(input_dim=20_000, output_dim=16, base_dim=64, p0=0.8),
    dict(input_dim=100, output_dim=8, filter_kind="real", num_source_matrices=4),
])
def test_accepted_settings_give_nearly_every_id_its_own_filter(kwargs):
    assert distinct_share(ALONEEmbedding(seed=1, **kwargs)) >= 0.9
