"""dataset-build's prose in 38 languages: documents, sentences, splits by document."""

import pytest

from keras_subembed import datasets
from tests.installed import needs_dataset_build


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
