"""Sentences out of documents, and training / held-out splits that keep a document (and
its near copies) on one side."""

import pytest

from keras_subembed import datasets
from tests.installed import needs_gensim


@pytest.mark.parametrize("text, expected", [
    ('Mr. Smith went to Washington. "Why?" he asked.',
     ["Mr. Smith went to Washington.", '"Why?" he asked.']),
    ("George W. Bush met U.S. troops. Prices rose 3.5 per cent! Really?",
     ["George W. Bush met U.S. troops.", "Prices rose 3.5 per cent!", "Really?"]),
    ("See e.g. the list. it goes on", ["See e.g. the list. it goes on"]),
    ("cut off .  .  i would\nhave loved it . you found",
     ["cut off . .", "i would have loved it .", "you found"]),
    ("He said (it was over.) Then left.", ["He said (it was over.)", "Then left."]),
    ("", []),
    ("  ...  ", []),
])
def test_split_sentences(text, expected):
    assert datasets.split_sentences(text) == expected


def test_split_sentences_rejects_non_strings():
    with pytest.raises(TypeError, match="`text` must be a string"):
        datasets.split_sentences(["a list"])


def test_sentences_filters_by_word_count():
    documents = ["One two three. Four. Five six seven eight nine ten!", "Eleven twelve thirteen?"]
    assert datasets.sentences(documents) == [
        "One two three.", "Five six seven eight nine ten!", "Eleven twelve thirteen?"]
    assert datasets.sentences(documents, min_words=1, max_words=3) == [
        "One two three.", "Four.", "Eleven twelve thirteen?"]
    with pytest.raises(ValueError, match="min_words=0"):
        datasets.sentences(documents, min_words=0)
    with pytest.raises(ValueError, match="max_words=2"):
        datasets.sentences(documents, min_words=3, max_words=2)
    with pytest.raises(TypeError, match="list of strings"):
        datasets.sentences("One document as a string.")


def test_split_by_document_is_a_deterministic_partition():
    documents = [f"document {i}." for i in range(50)]
    training, held_out = datasets.split_by_document(documents, 0.2, seed=3)
    assert len(held_out) == 10 and len(training) == 40
    assert sorted(training + held_out) == sorted(documents)
    assert training == [d for d in documents if d in training]  # input order
    assert datasets.split_by_document(documents, 0.2, seed=3) == (training, held_out)
    assert datasets.split_by_document(documents, 0.2, seed=4)[1] != held_out


def test_split_by_document_keeps_copies_together():
    documents = ["a", "b", "a", "c", "b", "a", "d"]
    for seed in range(10):
        training, held_out = datasets.split_by_document(documents, 0.5, seed=seed)
        assert not set(training) & set(held_out)
        assert len(training) + len(held_out) == len(documents)
        assert len(set(held_out)) == 2  # half of 4 distinct documents


def test_split_by_document_errors():
    with pytest.raises(ValueError, match="held_out_fraction=1.0"):
        datasets.split_by_document(["a", "b"], 1.0)
    with pytest.raises(ValueError, match="held_out_fraction=0"):
        datasets.split_by_document(["a", "b"], 0)
    with pytest.raises(ValueError, match="at least 2 distinct"):
        datasets.split_by_document(["a", "a"], 0.5)
    with pytest.raises(ValueError, match="shared_sentence_words=0"):
        datasets.split_by_document(["a", "b"], 0.5, shared_sentence_words=0)
    with pytest.raises(TypeError, match="list of strings"):
        datasets.split_by_document([["a"], ["b"]], 0.5)


def test_split_by_document_keeps_near_copies_together():
    story = "The minister said the new bridge will open to traffic next month."
    documents = [f"Intro {i}. {story}" for i in range(3)] + ["Other news today.", "More news here."]
    for seed in range(10):
        training, held_out = datasets.split_by_document(documents, 0.4, seed=seed)
        copies_held_out = {d for d in held_out if story in d}
        assert len(copies_held_out) in (0, 3)
    # Without the sentence rule they are three documents, split freely.
    splits = {tuple(datasets.split_by_document(documents, 0.4, seed=s, shared_sentence_words=None)[1])
              for s in range(10)}
    assert any(0 < sum(story in d for d in held_out) < 3 for held_out in splits)


@needs_gensim
@pytest.mark.parametrize("seed", [0, 1])
def test_lee_training_and_held_out_sentences_never_meet(seed):
    documents = datasets.lee_documents()
    training, held_out = datasets.split_by_document(documents, 0.2, seed=seed)
    assert 55 <= len(held_out) <= 62 and len(training) + len(held_out) == 293
    training_sentences = set(datasets.sentences(training, min_words=1))
    held_out_sentences = set(datasets.sentences(held_out, min_words=1))
    assert len(held_out_sentences) > 400
    # Lee repeats stories (e.g. two versions of one swimming report): these
    # share sentences, and must not end up on both sides.
    assert not training_sentences & held_out_sentences


def test_held_out_fraction_as_a_string_is_named():
    from keras_subembed.datasets.sentence_split import split_by_document

    with pytest.raises(ValueError, match=r"`held_out_fraction` must be a probability strictly "
                                         r"between 0 and 1\. Received: held_out_fraction='0\.2'"):
        split_by_document(["a", "b", "c"], held_out_fraction="0.2")
    with pytest.raises(ValueError, match=r"Received: held_out_fraction='0\.2'"):
        datasets.multilingual_sentences("deu", held_out_fraction="0.2")
