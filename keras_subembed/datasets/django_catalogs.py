"""Parallel UI sentences in about 95 locales, from Django's translation catalogs.

Django ships its messages translated (`django/conf/locale/<locale>/LC_MESSAGES/django.mo`
and each contrib app's `locale/`): (English, translation) pairs for
cross-lingual retrieval, read in place with `gettext`. Nothing downloads.
"""

from keras_subembed.datasets.translation_catalogs import read_catalog_pairs
from keras_subembed.optional import django


def _django_dir():
    return django.folder()


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


def django_translation_pairs(locale, min_letters=8):
    """`(English, translation)` pairs of Django's messages in `locale`, in catalog order.

    Read with `gettext` from Django's core catalog (`django.mo`) then its
    contrib apps' (admin, auth, humanize, ...), kept as `read_catalog_pairs`
    keeps them: at least `min_letters` letters of English once placeholders
    and markup are removed, one pair per plural message, no context, each
    English text and each translation once (every query has one right
    answer).

    Example:

    >>> pairs = django_translation_pairs("fr")
    >>> english, french = zip(*pairs)
    """
    locales = django_locales()
    if locale not in locales:
        raise ValueError(f"`locale` must be one of Django's locales {locales}. "
                         f"Received: locale={locale!r}")
    return read_catalog_pairs(_catalog_files(locale), min_letters)
