"""Parallel UI sentences in about 95 locales, from Django's translation catalogs.

Django ships its messages translated (`django/conf/locale/<locale>/LC_MESSAGES/django.mo`
and each contrib app's `locale/`): (English, translation) pairs for
cross-lingual retrieval, read in place with `gettext`. Nothing downloads.
"""

import gettext
import re

from keras_subembed.datasets.packages import package_dir

_DJANGO_HINT = (
    "The parallel sentences come from Django's translation catalogs (the `django` "
    "package). Install Django with the other multilingual data:\n"
    '    python -m pip install "keras-subembed[multilingual]"'
)
# printf and str.format placeholders, HTML tags: not words of either language.
_PLACEHOLDER = re.compile(
    r"%\([^)]*\)[-#0 +]*\d*(?:\.\d+)?[a-zA-Z]|%[-#0 +]*\d*(?:\.\d+)?[a-zA-Z%]|\{[^{}]*\}|<[^>]*>")
_CONTEXT_SEPARATOR = "\x04"  # gettext's msgctxt "\x04" msgid


def _django_dir():
    return package_dir("django", _DJANGO_HINT)


def _catalog_files(locale):
    root = _django_dir()
    files = [root / "conf" / "locale" / locale / "LC_MESSAGES" / "django.mo"]
    files += sorted((root / "contrib").glob(f"*/locale/{locale}/LC_MESSAGES/django.mo"))
    return [path for path in files if path.is_file()]


def django_locales():
    """The locales Django translates its core messages into (English ones left out), sorted.

    Example:

    >>> "fr" in django_locales()
    True
    """
    folder = _django_dir() / "conf" / "locale"
    return sorted(entry.name for entry in folder.iterdir()
                  if (entry / "LC_MESSAGES" / "django.mo").is_file()
                  and entry.name.split("_")[0] != "en")


def _words(text):
    """`text` without placeholders and markup, white space collapsed."""
    return " ".join(_PLACEHOLDER.sub(" ", text).split())


def django_translation_pairs(locale, min_letters=8):
    """`(English, translation)` pairs of Django's messages in `locale`, in catalog order.

    Read with `gettext` from Django's core catalog then its contrib apps'
    (admin, auth, humanize, ...). Kept: translated messages whose English
    has at least `min_letters` letters once placeholders (`%(name)s`,
    `{0}`) and HTML tags are removed, and whose translation differs from it.
    A message with plural forms gives one pair: its English singular and the
    form the locale uses for one. A message context (`msgctxt`) is dropped.
    Each English text and each translation appears once (the first pair), so
    every query has one right answer.

    Example:

    >>> pairs = django_translation_pairs("fr")
    >>> english, french = zip(*pairs)
    """
    locales = django_locales()
    if locale not in locales:
        raise ValueError(f"`locale` must be one of Django's locales {locales}. "
                         f"Received: locale={locale!r}")
    if isinstance(min_letters, bool) or not isinstance(min_letters, int) or min_letters < 0:
        raise ValueError(f"`min_letters` must be an int >= 0. "
                         f"Received: min_letters={min_letters!r}")
    pairs, seen_english, seen_translation = [], set(), set()
    for path in _catalog_files(locale):
        with open(path, "rb") as file:
            translations = gettext.GNUTranslations(file)
        singular_form = translations.plural(1)
        # GNUTranslations keeps its messages in `_catalog`: gettext has no public
        # way to list them.
        for key, translation in translations._catalog.items():
            if isinstance(key, tuple):
                key, form = key
                if form != singular_form:
                    continue
            if not key:
                continue  # the catalog's header
            english = " ".join(key.rpartition(_CONTEXT_SEPARATOR)[2].split())
            translation = " ".join(translation.split())
            if not translation or translation == english:
                continue
            if sum(character.isalpha() for character in _words(english)) < min_letters:
                continue
            if english in seen_english or translation in seen_translation:
                continue
            seen_english.add(english)
            seen_translation.add(translation)
            pairs.append((english, translation))
    return pairs
