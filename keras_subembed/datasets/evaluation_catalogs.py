"""A finer cross-lingual evaluation: 615 to 5,371 English messages in each of 45 locales, from the catalogs of five packages that nothing trains on.

Django's 177 shared messages make one pair worth 0.56 points of a locale's recall. Trac,
django-oscar, Sphinx, Plone (`plone.app.locales`) and django-allauth ship their interface
translated too (BSD, BSD, BSD, GPL-2 and MIT): their catalogs are read in place, never
imported, and every message that the training catalogs (Wagtail's) hold is dropped.
"""

import re

from keras_subembed.checks import check_bool
from keras_subembed.checks import check_non_negative_int
from keras_subembed.datasets.training_pairs import comparable
from keras_subembed.datasets.training_pairs import held_messages
from keras_subembed.datasets.training_pairs import language_of
from keras_subembed.datasets.translation_catalogs import _catalog_files
from keras_subembed.datasets.translation_catalogs import _package_root
from keras_subembed.datasets.translation_catalogs import catalog_locales
from keras_subembed.datasets.translation_catalogs import catalog_translation_pairs
from keras_subembed.datasets.translation_catalogs import read_catalog_pairs

# {package: what pip installs it as}; `--no-deps` each: only their catalogs are read.
EVALUATION_PACKAGES = {"trac": "Trac", "oscar": "django-oscar", "sphinx": "sphinx",
                       "plone": "plone.app.locales", "allauth": "django-allauth"}
MIN_MESSAGES = 600
# Folders that name one locale differently across packages; `xx_XX` (de_DE) is `xx` too.
_ALIASES = {"zh_CN": "zh_Hans", "zh_Hans_CN": "zh_Hans", "zh_SG": "zh_Hans",
            "zh_TW": "zh_Hant", "zh_Hant_TW": "zh_Hant", "no": "nb", "pt_PT": "pt"}
_MAIN_REGION = {"am": "ET", "ar": "SA", "bn": "BD", "ca": "ES", "cs": "CZ", "da": "DK",
                "el": "GR", "fa": "IR", "gu": "IN", "he": "IL", "hi": "IN", "hy": "AM",
                "ja": "JP", "ka": "GE", "ko": "KR", "mn": "MN", "my": "MM", "nb": "NO",
                "sl": "SI", "sr": "RS", "sv": "SE", "sw": "KE", "ta": "IN", "uk": "UA",
                "vi": "VN"}
# Regional locales the default keeps beside their language's (Django's names).
_REGIONAL = ("pt_BR", "zh_Hans", "zh_Hant")
# A message id (Plone's `label_title`), not English text: its translation has no source.
_MESSAGE_ID = re.compile(r"[\w.-]*_[\w.-]*")


def evaluation_locale(folder):
    """The locale a catalog folder's name stands for, as Django names it.

    >>> [evaluation_locale(name) for name in ("de_DE", "zh_CN", "ja_JP", "pt_BR", "sr@latin")]
    ['de', 'zh_Hans', 'ja', 'pt_BR', 'sr@latin']
    """
    folder = folder.split(".")[0]  # zh_TW.Big5: the charset is no locale
    if folder in _ALIASES:
        return _ALIASES[folder]
    match = re.fullmatch(r"([a-z]{2,3})_([A-Z]{2})", folder)
    if match and match[2] in (match[1].upper(), _MAIN_REGION.get(match[1])):
        return match[1]
    return folder


def _check_names(name, values):
    if isinstance(values, str) or not isinstance(values, (list, tuple)) or not values or not all(
            isinstance(value, str) for value in values):
        raise TypeError(f"`{name}` must be a non-empty list of names. Received: {name}={values!r:.100}")
    return list(values)


def _package_pairs(package, min_letters):
    """`{locale: pairs}` of `package`, the folders of one locale read together."""
    folders = {}
    for folder, paths in _catalog_files(_package_root(package,
                                                      EVALUATION_PACKAGES.get(package))).items():
        folders.setdefault(evaluation_locale(folder), []).extend(paths)
    return {locale: read_catalog_pairs(paths, min_letters) for locale, paths in folders.items()}


def evaluation_pairs(locales=None, min_messages=MIN_MESSAGES, packages=tuple(EVALUATION_PACKAGES),
                     training_catalog="wagtail", min_letters=8, verbose=False):
    """`{locale: [(english, translation), ...]}` for cross-lingual retrieval, sorted by locale.

    Each locale gathers the messages of every package in `packages` (in that order, then
    in catalog order), kept as `read_catalog_pairs` keeps them, and drops: a message id
    rather than English (`label_title`); a message whose English is the training
    catalog's, or whose translation is one of its translations in that language (compared
    as `comparable` text); a message whose English or translation repeats an earlier one.
    So every query has one right answer and nothing evaluated was trained on.

    Args:
        locales: list of locale names (Django's: `"fr"`, `"pt_BR"`, `"zh_Hans"`), or
            None: every language's locale (and pt_BR, zh_Hans, zh_Hant) that holds at
            least `min_messages` messages.
        min_messages: int >= 0. A named locale with fewer is an error.
        packages: installed packages to read (default `EVALUATION_PACKAGES`).
        training_catalog: the package the training pairs come from, or None.
        min_letters: int >= 0, as in `read_catalog_pairs`.
        verbose: print the locale and message counts.

    Example:
    ```python
    # pip install --no-deps Trac django-oscar sphinx plone.app.locales django-allauth
    pairs = evaluation_pairs()
    len(pairs), min(map(len, pairs.values()))
    # (45, 615)
    ```
    """
    min_messages = check_non_negative_int("min_messages", min_messages)
    min_letters = check_non_negative_int("min_letters", min_letters)
    verbose = check_bool("verbose", verbose)
    packages = _check_names("packages", packages)
    if locales is not None:
        locales = _check_names("locales", locales)
    if training_catalog is not None and not isinstance(training_catalog, str):
        raise TypeError("`training_catalog` must be a package's name or None. "
                        f"Received: training_catalog={training_catalog!r}")
    read = [_package_pairs(package, min_letters) for package in packages]
    # The training catalog's own locale names are enough: only their language is compared.
    english, translated = held_messages(
        {locale: catalog_translation_pairs(training_catalog, locale, min_letters=0)
         for locale in catalog_locales(training_catalog)} if training_catalog else {})
    pairs = {}
    for locale in sorted(set().union(*read)):
        language, seen, kept = language_of(locale), set(), []
        if language == "en":
            continue
        for source, translation in (pair for by_locale in read for pair in by_locale.get(locale, ())):
            keys = (comparable(source), (language, comparable(translation)))
            if (_MESSAGE_ID.fullmatch(source) or keys[0] in english or keys[1] in translated
                    or not seen.isdisjoint(keys)):
                continue
            seen.update(keys)
            kept.append((source, translation))
        pairs[locale] = kept
    if locales is None:
        locales = [locale for locale, found in pairs.items() if len(found) >= min_messages
                   and (re.fullmatch(r"[a-z]{2,3}", locale) or locale in _REGIONAL)]
    for locale in locales:
        if len(pairs.get(locale, ())) < min_messages:
            raise ValueError(
                f"`locales` must name locales with at least min_messages={min_messages} "
                f"messages in {packages}; {locale!r} has {len(pairs.get(locale, ()))}. "
                f"Received: locales={locales!r:.200}")
    chosen = {locale: pairs[locale] for locale in sorted(locales)}
    if verbose:
        counts = [len(found) for found in chosen.values()]
        print(f"Evaluation pairs: {len(chosen)} locales, {min(counts, default=0):,} to "
              f"{max(counts, default=0):,} messages each ({sum(counts):,} in all)")
    return chosen
