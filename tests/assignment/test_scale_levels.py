"""`norm_scale_levels`: one byte per token that gives each rebuilt row its table row's norm."""

import numpy as np

from keras_subembed.assignment.scale_levels import SCALE_LEVELS
from keras_subembed.assignment.scale_levels import norm_scale_levels


def test_each_row_gets_the_level_that_restores_its_norm():
    rebuilt = np.random.default_rng(0).normal(size=(40, 6)).astype("float32")
    ratios = np.where(np.arange(40) % 2 == 0, 2.0, 0.5)  # two scales: two levels
    table = rebuilt * ratios[:, None]
    levels, codes = norm_scale_levels(table, rebuilt)
    assert levels.dtype == np.float32 and levels.shape == (SCALE_LEVELS,)
    assert codes.dtype == np.uint8 and codes.shape == (40,)
    np.testing.assert_allclose(levels[codes], ratios, rtol=1e-6)
    assert set(codes.tolist()) == {1, 2}  # level 0 is kept for the exact rows
    # Only as many levels as there are distinct scales are used; the rest stay 1.
    assert levels[0] == 1.0 and np.all(levels[3:] == 1.0)


def test_reserved_and_zero_rows_keep_level_zero_of_exactly_one():
    rebuilt = np.random.default_rng(1).normal(size=(10, 4))
    rebuilt[7] = 0.0  # rebuilt as zero: no scale makes its norm
    table = 3.0 * rebuilt
    table[7] = 1.0
    levels, codes = norm_scale_levels(table, rebuilt, reserved_ids=(0, 4))
    assert codes[[0, 4, 7]].tolist() == [0, 0, 0] and levels[0] == 1.0
    others = np.setdiff1d(np.arange(10), [0, 4, 7])
    np.testing.assert_allclose(levels[codes[others]], 3.0, rtol=1e-6)


def test_with_nothing_to_scale_every_token_is_level_zero():
    table = np.ones((5, 3))
    levels, codes = norm_scale_levels(table, np.zeros((5, 3)))
    assert np.all(levels == 1.0) and np.all(codes == 0)
