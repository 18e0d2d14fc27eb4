"""Parallel training text from installed packages' catalogs, with languages weighted and the
evaluation's catalogs kept out."""

import re
import unicodedata

import numpy as np

from keras_subembed.checks import check_non_negative_int
from keras_subembed.checks import check_seed
from keras_subembed.datasets.django_catalogs import django_locales
from keras_subembed.datasets.django_catalogs import django_translation_pairs
from keras_subembed.datasets.translation_catalogs import catalog_locales
from keras_subembed.datasets.translation_catalogs import catalog_translation_pairs


def comparable(text):
    """`text` as the leakage filter compares it: NFKC, case-folded, only its words."""
    return " ".join(re.findall(r"\w+", unicodedata.normalize("NFKC", text).casefold()))


def language_of(locale):
    """The language of a locale folder's name: `"pt"` for `"pt_BR"`, `"sr"` for `"sr@latin"`."""
    return re.split(r"[_@-]", locale)[0]


def held_messages(pairs_by_locale):
    """What a leakage filter looks up in `{locale: [(english, translation), ...]}`: the set of
    its `comparable` English and the set of its `(language, comparable translation)`."""
    english, translated = set(), set()
    for locale, pairs in pairs_by_locale.items():
        for source, translation in pairs:
            english.add(comparable(source))
            translated.add((language_of(locale), comparable(translation)))
    return english, translated


def catalog_training_pairs(package):
    """(English, translation) pairs of `package`'s catalogs by language.

    Returns `{"he": [(english, translation), ...], ...}`: the locales of a language together,
    each pair once, without any pair that Django's catalogs (the evaluation's) could give
    away: its English (case, punctuation and quotes aside) is a Django message, or its
    translation is a Django translation in the same language.

    Example:
    ```python
    pairs = catalog_training_pairs("wagtail")    # pip install --no-deps wagtail
    sorted(pairs)[:3]
    # ['ar', 'az', 'be']
    ```
    """
    if package == "django":
        raise ValueError("`package` must not be 'django': Django's catalogs are the "
                         "evaluation's. Received: package='django'")
    locales = catalog_locales(package)
    english, translated = held_messages(
        {locale: django_translation_pairs(locale, min_letters=0) for locale in django_locales()})
    pairs = {}
    for locale in locales:
        language = language_of(locale)
        for source, translation in catalog_translation_pairs(package, locale):
            if (comparable(source) not in english
                    and (language, comparable(translation)) not in translated):
                pairs.setdefault(language, {}).setdefault((source, translation), None)
    return {language: list(found) for language, found in sorted(pairs.items())}


def language_quotas(counts, total, alpha=0.5):
    """How many of `total` items each language gives.

    Shares are proportional to `count ** alpha` (1: as the data holds them; 0: every
    language alike), each at most its count; what a language lacks is shared out among the
    others (largest remainders round). Multilingual models sample their languages so
    (XLM-R's alpha is 0.3): in proportion, small catalogs (Hebrew, Vietnamese) gave a few
    dozen pairs and were the locales furthest below the teacher.

    >>> language_quotas({"de": 900, "he": 100}, 200, alpha=0.5)
    {'de': 150, 'he': 50}
    """
    if not isinstance(counts, dict) or not all(
            isinstance(count, (int, np.integer)) and count >= 0 for count in counts.values()):
        raise TypeError("`counts` must be a dict {language: non-negative int}. "
                        f"Received: counts={counts!r:.200}")
    total = check_non_negative_int("total", total)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha <= 1:
        raise ValueError(f"`alpha` must be a number in [0, 1]. Received: alpha={alpha!r}")
    quotas = dict.fromkeys(counts, 0)
    while True:
        left = total - sum(quotas.values())
        open_languages = [language for language in counts if quotas[language] < counts[language]]
        if left <= 0 or not open_languages:
            return quotas
        weights = np.array([counts[language] ** alpha for language in open_languages], "float64")
        shares = weights / weights.sum() * left
        extra = np.floor(shares).astype(int)
        extra[np.argsort(extra - shares, kind="stable")[:left - extra.sum()]] += 1
        for language, count in zip(open_languages, extra):
            quotas[language] = min(counts[language], quotas[language] + int(count))


def sample(items, count, rng):
    """`count` of `items` drawn without replacement, in their order (all when fewer)."""
    if len(items) <= count:
        return list(items)
    return [items[i] for i in sorted(rng.choice(len(items), count, replace=False))]


def draw_training_pairs(package, count=6_000, alpha=0.5, seed=0):
    """`count` translation pairs of `package`'s catalogs, each language's share by
    `language_quotas(..., alpha)`, and how many the catalogs held.

    Returns `(pairs, available)`: a list of `(english, translation)` and an int.

    Example:
    ```python
    pairs, available = draw_training_pairs("wagtail", 6_000)
    len(pairs), available > 6_000
    # (6000, True)
    ```
    """
    count = check_non_negative_int("count", count)
    seed = check_seed(seed)
    by_language = catalog_training_pairs(package)
    counts = {language: len(pairs) for language, pairs in by_language.items()}
    quotas = language_quotas(counts, count, alpha)
    rng = np.random.default_rng(seed)
    drawn = [pair for language, pairs in by_language.items()
             for pair in sample(pairs, quotas[language], rng)]
    return drawn, sum(counts.values())
