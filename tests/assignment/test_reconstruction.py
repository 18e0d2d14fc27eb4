"""`reconstruction_quality` and the table check: exact figures in bounded memory."""

import tracemalloc

import numpy as np
import pytest

from keras_subembed.assignment import product_codes
from keras_subembed.assignment import reconstruction_quality


def traced_peak(function, *args, **kwargs):
    """Bytes allocated at the peak of `function(*args, **kwargs)` (NumPy's included)."""
    tracemalloc.start()
    try:
        function(*args, **kwargs)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_reconstruction_quality_matches_the_float64_formulas():
    rng = np.random.default_rng(0)
    original = rng.normal(size=(20_000, 12)).astype("float32")  # several blocks of rows
    rebuilt = (original + 0.1 * rng.normal(size=original.shape)).astype("float32")
    rebuilt[5] = 0.0  # a zero row: cosine 0, not NaN
    a, b = original.astype("float64"), rebuilt.astype("float64")
    cosines = np.sum(a * b, axis=1) / np.maximum(
        np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-12)
    got = reconstruction_quality(original, rebuilt)
    assert got == pytest.approx({
        "relative_error": np.linalg.norm(b - a) / np.linalg.norm(a),
        "mean_cosine": cosines.mean(), "mse": np.mean((b - a) ** 2)}, rel=1e-12)
    assert reconstruction_quality(original, original)["mse"] == 0.0


def test_reconstruction_quality_makes_no_float64_copy_of_the_tables():
    rng = np.random.default_rng(1)
    original = rng.normal(size=(100_000, 64)).astype("float32")  # 25.6 MB
    rebuilt = original + np.float32(0.01)
    # Float64 copies of both tables and their difference were 150 MB and more.
    assert traced_peak(reconstruction_quality, original, rebuilt) < 0.6 * original.nbytes


def test_reconstruction_quality_names_tables_that_do_not_pair():
    with pytest.raises(ValueError, match=r"`original` and `reconstructed` must be non-empty "
                       r"2-D tables of one shape\. Received: original\.shape=\(4, 3\), "
                       r"reconstructed\.shape=\(4, 2\)"):
        reconstruction_quality(np.ones((4, 3)), np.ones((4, 2)))


def test_product_codes_read_the_table_without_copying_it():
    table = np.random.default_rng(2).normal(size=(200_000, 32)).astype("float32")  # 25.6 MB
    # The table was copied (1x) and squared in float64 (2x) by its check, and
    # the codes made twice (3.2x in all); now the codes (200,000 x 4 int64,
    # 0.25x), a column chunk (0.25x) and the distances of a block of rows.
    peak = traced_peak(product_codes, table, 4, 16, max_iterations=5)
    assert peak < table.nbytes, peak
