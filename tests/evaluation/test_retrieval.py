"""`translation_retrieval` on vectors of any finite size."""

import numpy as np
import pytest

from keras_subembed import evaluation


@pytest.mark.parametrize("scale", [1e300, 1e-300, 1.0])
def test_huge_and_tiny_vectors_are_normalised_without_overflow(scale):
    queries = np.array([[1.0, 0.1], [0.0, 1.0], [0.7, -0.7]]) * scale
    candidates = np.array([[1.0, 0.0], [0.2, 1.0], [0.6, -0.8]]) * scale
    result = evaluation.translation_retrieval(queries, candidates)
    assert result["accuracy"] == 1.0
    assert result["margin"] == pytest.approx(
        evaluation.translation_retrieval(queries / scale, candidates / scale)["margin"])


def test_locales_keyed_by_mixed_types_are_named():
    vectors = np.eye(3)
    with pytest.raises(TypeError, match=r"`english` must be keyed by locale names \(str\)\. "
                                        r"Received keys: \['fr', 7\]"):
        evaluation.cross_lingual_retrieval({"fr": vectors, 7: vectors}, {"fr": vectors, 7: vectors})
