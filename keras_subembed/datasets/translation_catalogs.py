"""Parallel UI sentences from an installed package's gettext catalogs.

Many Python packages ship their interface translated: `<package>/**/locale/<locale>/LC_MESSAGES/*.mo`.
Their (English, translation) pairs are parallel text in dozens of locales, read in place
with `gettext`. Nothing downloads, and the package is never imported. The multilingual
job trains on Wagtail's catalogs (`python -m pip install --no-deps wagtail`: only its
files are read) and evaluates on Django's (`django_translation_pairs`).
"""

import gettext
import re
import struct

from keras_subembed.checks import check_non_negative_int
from keras_subembed.optional import OptionalModule

# printf and str.format placeholders, HTML tags: not words of either language.
_PLACEHOLDER = re.compile(
    r"%\([^)]*\)[-#0 +]*\d*(?:\.\d+)?[a-zA-Z]|%[-#0 +]*\d*(?:\.\d+)?[a-zA-Z%]|\{[^{}]*\}|<[^>]*>")
_CONTEXT_SEPARATOR = "\x04"  # gettext's msgctxt "\x04" msgid


def _words(text):
    """`text` without placeholders and markup, white space collapsed."""
    return " ".join(_PLACEHOLDER.sub(" ", text).split())


def _package_root(package, distribution=None):
    """The folder of `package`; the pip hint installs `distribution` (default: its name)."""
    # A dotted name would import its parent package to find it: the catalogs are only read.
    if not isinstance(package, str) or not package or "." in package:
        raise TypeError(f"`package` must be the name of an installed top-level package. "
                        f"Received: package={package!r}")
    if not package.isidentifier():
        # A path is no package name: the pip hint would name it as one.
        raise ValueError(f"`package` must be a package's name (a Python identifier), not a "
                         f"path. Received: package={package!r}")
    return OptionalModule(package, None, f"Reading `{package}`'s translation catalogs",
                          pip_name=distribution or package).folder()


def _catalog_files(root):
    """`{locale: [.mo paths, sorted]}` of every catalog under `root`, English ones left out.

    Any `<locale>/LC_MESSAGES/` folder counts: Plone's lie under `locales/`.
    """
    files = {}
    for path in sorted(root.glob("**/*/LC_MESSAGES/*.mo")):
        locale = path.parts[-3]
        if re.split(r"[_@-]", locale)[0] != "en":
            files.setdefault(locale, []).append(path)
    return files


def catalog_locales(package):
    """The locales `package` ships gettext catalogs for (English ones left out), sorted.

    Example:

    >>> "fr" in catalog_locales("django")
    True
    """
    return sorted(_catalog_files(_package_root(package)))


def catalog_translation_pairs(package, locale, min_letters=8):
    """`(English, translation)` pairs of every catalog `package` ships for `locale`.

    The catalogs are `<package>/**/locale/<locale>/LC_MESSAGES/*.mo`, read in
    sorted path order (where two catalogs translate the same English, the
    first path's pair is kept); the pairs are kept as `read_catalog_pairs`
    keeps them.

    Args:
        package: str. An installed package's name (e.g. `"wagtail"`).
        locale: str. One of `catalog_locales(package)`.
        min_letters: int >= 0. Fewer letters in the English (placeholders and
            markup removed) drop the pair.

    Example:

    >>> pairs = catalog_translation_pairs("django", "de")
    >>> len(pairs) > 400 and "Change password" in dict(pairs)
    True
    """
    files = _catalog_files(_package_root(package))
    if locale not in files:
        raise ValueError(f"`locale` must be one of the locales `{package}` translates into "
                         f"{sorted(files)}. Received: locale={locale!r}")
    return read_catalog_pairs(files[locale], min_letters)


def _read_catalog(path):
    """The `GNUTranslations` of the `.mo` file `path`, or a `ValueError` naming it."""
    try:
        with open(path, "rb") as file:
            return gettext.GNUTranslations(file)
    except (OSError, struct.error, UnicodeDecodeError, ValueError, IndexError) as error:
        if isinstance(error, OSError) and error.errno:
            raise  # the file cannot be opened: the OS error names it
        raise ValueError(f"{str(path)!r} is not a readable gettext .mo catalog "
                         f"({error or 'it is empty or cut short'}).") from None


def read_catalog_pairs(paths, min_letters=8):
    """`(English, translation)` pairs of the gettext `.mo` files `paths`, in order.

    Kept: translated messages whose English has at least `min_letters`
    letters once placeholders (`%(name)s`, `{0}`) and HTML tags are removed,
    and whose translation differs from it. A message with plural forms gives
    one pair: its English singular and the form the locale uses for one. A
    message context (`msgctxt`) is dropped. Each English text and each
    translation appears once (the first pair), so every query has one right
    answer.
    """
    check_non_negative_int("min_letters", min_letters)
    if isinstance(paths, (str, bytes)) or not hasattr(paths, "__iter__"):
        raise TypeError(f"`paths` must be a list of `.mo` file paths. Received: paths={paths!r:.80}")
    pairs, seen_english, seen_translation = [], set(), set()
    for path in paths:
        translations = _read_catalog(path)
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
