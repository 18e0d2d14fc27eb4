"""`translation_retrieval`, `translation_margins` and `cross_lingual_retrieval`: first
places and margins per locale, both directions, on vectors of any finite size."""

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


def _translations(rows=6, dimension=8, noise=0.1, seed=0):
    rng = np.random.default_rng(seed)
    english = rng.normal(size=(rows, dimension))
    return english, english + noise * rng.normal(size=(rows, dimension))


def test_translation_retrieval_counts_first_places_and_margins():
    queries = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    candidates = np.array([[1.0, 0.1], [1.0, 0.0], [1.0, 1.0]])  # query 1 finds row 0 or 1: wrong
    result = evaluation.translation_retrieval(queries, candidates)
    similarity = (queries / np.linalg.norm(queries, axis=1, keepdims=True)) @ (
        candidates / np.linalg.norm(candidates, axis=1, keepdims=True)).T
    margins = [similarity[i, i] - np.max(np.delete(similarity[i], i)) for i in range(3)]
    assert result["accuracy"] == pytest.approx(1 / 3)
    assert result["margin"] == pytest.approx(np.mean(margins))
    # Scale does not matter (cosine); a tie is not a win.
    assert evaluation.translation_retrieval(3 * queries, candidates) == pytest.approx(result)
    assert evaluation.translation_retrieval([[1.0, 0.0], [1.0, 0.0]],
                                            [[1.0, 0.0], [1.0, 0.0]])["accuracy"] == 0.0
    # Per query: the same margins, and the wrong candidate each one is measured against.
    per_query, best_wrong = evaluation.translation_margins(queries, candidates)
    np.testing.assert_allclose(per_query, margins, atol=1e-12)
    assert best_wrong.tolist() == [1, 2, 0]


def test_cross_lingual_retrieval_per_locale_both_directions_and_two_vector_sets():
    english_fr, french = _translations(seed=1)
    english_de, german = _translations(rows=5, seed=2)
    german[0] = english_de[1]  # German row 0 now finds English row 1
    english, translated = {"fr": english_fr, "de": english_de}, {"fr": french, "de": german}
    scores = evaluation.cross_lingual_retrieval(english, translated)
    for direction, (queries, candidates) in {
            "english_to_locale": (english, translated),
            "locale_to_english": (translated, english)}.items():
        for locale in ("fr", "de"):
            want = evaluation.translation_retrieval(queries[locale], candidates[locale])
            assert scores[direction]["accuracy"][locale] == want["accuracy"]
            assert scores[direction]["margin"][locale] == want["margin"]
        assert scores[direction]["mean_accuracy"] == pytest.approx(
            np.mean(list(scores[direction]["accuracy"].values())))
    assert scores["locale_to_english"]["accuracy"]["de"] == 0.8
    assert scores["english_to_locale"]["accuracy"]["fr"] == 1.0
    # A student's queries against a teacher's index: the index is what is searched.
    student = {"fr": english_fr[::-1].copy(), "de": english_de}
    against_teacher = evaluation.cross_lingual_retrieval(
        student, translated, english_index=english, translated_index=translated)
    assert against_teacher["english_to_locale"]["accuracy"]["fr"] == (
        evaluation.translation_retrieval(student["fr"], french)["accuracy"])
    assert against_teacher["locale_to_english"] == scores["locale_to_english"]


def test_cross_lingual_retrieval_names_mismatched_inputs():
    english, translated = _translations()
    with pytest.raises(ValueError, match=r"same shape.*\(6, 8\) and \(5, 8\)"):
        evaluation.translation_retrieval(english, translated[:5])
    with pytest.raises(ValueError, match=r"at least 2 rows"):
        evaluation.translation_retrieval(english[:1], translated[:1])
    with pytest.raises(ValueError, match=r"zero vector \(row 2\)"):
        evaluation.translation_retrieval(np.where(np.arange(6)[:, None] == 2, 0, english), translated)
    with pytest.raises(ValueError, match=r"Locale 'fr', english_to_locale: .*same shape"):
        evaluation.cross_lingual_retrieval({"fr": english}, {"fr": translated[:, :4]})
    with pytest.raises(ValueError, match=r"`translated` must have the same locales"):
        evaluation.cross_lingual_retrieval({"fr": english}, {"de": translated})
    with pytest.raises(TypeError, match=r"`english` must be a non-empty dict"):
        evaluation.cross_lingual_retrieval(english, {"fr": translated})
