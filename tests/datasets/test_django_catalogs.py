"""Django's translation catalogs: its locales and (English, translation) pairs."""

import pytest

from keras_subembed import datasets
from tests.installed import needs_django


@needs_django
def test_django_translates_into_about_ninety_five_locales():
    locales = datasets.django_locales()
    assert len(locales) >= 90 and {"fr", "ru", "zh_Hans", "ar", "ja"} <= set(locales)
    assert not [locale for locale in locales if locale.startswith("en")]


@needs_django
def test_translation_pairs_are_unique_worded_singular_and_context_free():
    pairs = datasets.django_translation_pairs("fr")
    english, french = zip(*pairs)
    assert len(pairs) > 400
    assert len(set(english)) == len(english) and len(set(french)) == len(french)
    assert ("Change password", "Modifier le mot de passe") in pairs  # contrib.auth/admin
    assert not [text for text in english if "\x04" in text]
    assert "%s PB" not in english and "Order" not in english  # placeholders only, too short
    assert all(e != f for e, f in pairs)
    # Plural messages: the English singular with the locale's form for one.
    plural = dict(pairs)["Ensure this value has at most %(limit_value)d character (it has "
                         "%(show_value)d)."]
    assert "caractère " in plural and "caractères" not in plural
    assert len(datasets.django_translation_pairs("fr", min_letters=0)) > len(pairs)


@needs_django
def test_bad_locale_and_min_letters_are_named():
    with pytest.raises(ValueError, match=r"`locale` must be one of .*locale='en'"):
        datasets.django_translation_pairs("en")
    with pytest.raises(ValueError, match=r"`min_letters` must be an integer >= 0"):
        datasets.django_translation_pairs("fr", min_letters=True)
