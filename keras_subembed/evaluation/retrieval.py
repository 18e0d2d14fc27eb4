"""Cross-lingual retrieval: finding a text's translation among all candidates.

Parallel texts (Django's catalogs: `datasets.django_translation_pairs`) are
embedded by the caller; row i of one set is the translation of row i of the
other, and every other row is a wrong answer.
"""

import numpy as np

from keras_subembed.evaluation.metrics import _as_matrix


def _unit_rows(argument, value):
    array = _as_matrix(argument, value)
    # Each row scaled to a largest |value| of 1 before squaring: the squares of
    # 1e300 overflow to inf (every cosine 0), those of 1e-200 underflow to 0.
    scales = np.max(np.abs(array), axis=1, keepdims=True)
    if np.any(scales == 0):
        raise ValueError(f"`{argument}` holds a zero vector (row {int(np.argmin(scales))}): "
                         "it has no direction to compare.")
    array = array / scales
    return array / np.linalg.norm(array, axis=1, keepdims=True)


def translation_margins(queries, candidates):
    """Per query: its translation's cosine minus the best wrong candidate's, and that candidate.

    Returns `(margins, best_wrong)`, two arrays over the queries: the margin is
    positive when `candidates[i]` is found first for `queries[i]` (a tie is 0,
    a miss), and `best_wrong[i]` is the index of the best other candidate.

    >>> margins, best_wrong = translation_margins([[1.0, 0.1], [0.0, 1.0]], [[1.0, 0.0], [0.2, 1.0]])
    >>> bool(margins[0] > 0), best_wrong.tolist()
    (True, [1, 0])
    """
    queries = _unit_rows("queries", queries)
    candidates = _unit_rows("candidates", candidates)
    if queries.shape != candidates.shape or len(queries) < 2:
        raise ValueError(
            "`queries` and `candidates` must have the same shape, row i of one the "
            "translation of row i of the other, and at least 2 rows. "
            f"Received: {queries.shape} and {candidates.shape}")
    similarity = queries @ candidates.T
    right = np.diag(similarity).copy()
    np.fill_diagonal(similarity, -np.inf)
    return right - similarity.max(axis=1), similarity.argmax(axis=1)


def translation_retrieval(queries, candidates):
    """How often `queries[i]` finds `candidates[i]` first among all `candidates`, by cosine.

    Returns `{"accuracy", "margin"}`: recall@1 (ties count against the
    right match) and the mean over queries of the right candidate's cosine
    minus the best wrong one's (negative when a wrong one wins). The two
    sets may come from different models: a student's queries against a
    teacher's index. Per query: `translation_margins`.

    >>> translation_retrieval([[1.0, 0.1], [0.0, 1.0]], [[1.0, 0.0], [0.2, 1.0]])["accuracy"]
    1.0
    """
    margins, _ = translation_margins(queries, candidates)
    return {"accuracy": float(np.mean(margins > 0)), "margin": float(np.mean(margins))}


def cross_lingual_retrieval(english, translated, english_index=None, translated_index=None):
    """Recall@1 and margins of English -> locale and locale -> English retrieval, per locale.

    Args:
        english: `{locale: vectors}` of the English texts, row i the
            original of `translated[locale]`'s row i (e.g. from
            `datasets.django_translation_pairs(locale)`).
        translated: `{locale: vectors}` of their translations.
        english_index, translated_index: the vectors searched, when not the
            queries' own: e.g. a teacher's, to score a student's queries
            against a server index built with the teacher.

    Returns:
        `{"english_to_locale": ..., "locale_to_english": ...}`, each
        `{"accuracy": {locale: recall@1}, "margin": {locale: mean margin},
        "mean_accuracy", "mean_margin"}` (means over locales).

    Example:

    >>> english = {"fr": [[1.0, 0.0], [0.0, 1.0]], "de": [[1.0, 0.2], [0.1, 1.0]]}
    >>> translated = {"fr": [[0.9, 0.1], [0.2, 0.9]], "de": [[0.2, 1.0], [1.0, 0.1]]}
    >>> scores = cross_lingual_retrieval(english, translated)
    >>> scores["english_to_locale"]["accuracy"], scores["english_to_locale"]["mean_accuracy"]
    ({'de': 0.0, 'fr': 1.0}, 0.5)
    """
    english_index = english if english_index is None else english_index
    translated_index = translated if translated_index is None else translated_index
    sets = {"english": english, "translated": translated, "english_index": english_index,
            "translated_index": translated_index}
    for name, value in sets.items():
        if not isinstance(value, dict) or not value:
            raise TypeError(f"`{name}` must be a non-empty dict {{locale: vectors}}. "
                            f"Received: {type(value).__name__}")
        # Locales are sorted for the report: keys of mixed types cannot be.
        if not all(isinstance(locale, str) for locale in value):
            raise TypeError(f"`{name}` must be keyed by locale names (str). "
                            f"Received keys: {list(value)!r:.120}")
    locales = sorted(english)
    for name, value in sets.items():
        if sorted(value) != locales:
            raise ValueError(f"`{name}` must have the same locales as `english` "
                             f"({locales}). Received: {sorted(value)}")
    directions = {"english_to_locale": (english, translated_index),
                  "locale_to_english": (translated, english_index)}
    scores = {}
    for direction, (queries, candidates) in directions.items():
        per_locale = {}
        for locale in locales:
            try:
                per_locale[locale] = translation_retrieval(queries[locale], candidates[locale])
            except ValueError as error:
                raise ValueError(f"Locale {locale!r}, {direction}: {error}") from None
        accuracy = {locale: value["accuracy"] for locale, value in per_locale.items()}
        margin = {locale: value["margin"] for locale, value in per_locale.items()}
        scores[direction] = {"accuracy": accuracy, "margin": margin,
                             "mean_accuracy": float(np.mean(list(accuracy.values()))),
                             "mean_margin": float(np.mean(list(margin.values())))}
    return scores
