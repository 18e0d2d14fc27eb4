"""Text from gensim's test data: news, a novel, reviews, labelled sentences, newsgroup
posts, word similarity and Wikipedia, decoded and cleaned."""

import io
import pickle
import re
import zlib
from fractions import Fraction

import numpy as np
import pytest

from keras_subembed import datasets
from keras_subembed.datasets import gensim_text
from tests.installed import needs_gensim


@needs_gensim
def test_lee_documents():
    background = datasets.lee_documents()
    test = datasets.lee_documents("test")
    assert len(background) == 293  # 300 lines, 7 repeats dropped
    assert len(test) == 50
    assert background[0].startswith("Hundreds of people have been forced to vacate")
    assert all(isinstance(d, str) and d == d.strip() for d in background + test)
    assert len(set(background)) == len(background)
    assert not set(background) & set(test)
    assert any("£" in d for d in test)  # latin-1, decoded
    assert datasets.lee_documents() == background
    with pytest.raises(ValueError, match="subset=.*'training'"):
        datasets.lee_documents("training")


@needs_gensim
def test_novel_paragraphs():
    english = datasets.novel_paragraphs()
    russian = datasets.novel_paragraphs("russian")
    assert len(english) == 2 and len(russian) == 3
    assert english[0].startswith("On an exceptionally hot evening early in July")
    assert not any(re.search("[а-я]", p) for p in english)
    assert all(re.search("[а-я]", p) for p in russian)
    with pytest.raises(ValueError, match="language='french'"):
        datasets.novel_paragraphs("french")


@needs_gensim
def test_movie_reviews():
    reviews = datasets.movie_reviews()
    assert len(reviews) == 10
    assert reviews[0].startswith("it was a bit bizarre and evil")
    assert not any(r.startswith("_*") for r in reviews)
    assert any("fiancé" in r for r in reviews)  # UTF-8, decoded


@needs_gensim
def test_polarity_sentences():
    texts, labels = datasets.polarity_sentences()
    assert len(texts) == 200 and labels.shape == (200,) and labels.dtype == np.int64
    assert np.bincount(labels).tolist() == [100, 100]
    assert (texts[0], labels[0]) == ("simplistic , silly and tedious .", 0)
    assert texts[-1].startswith("i enjoyed time of favor") and labels[-1] == 1
    assert not any("__label__" in t for t in texts)
    assert any("clichés" in t for t in texts)  # cp1252, decoded
    again_texts, again_labels = datasets.polarity_sentences()
    assert again_texts == texts and np.array_equal(again_labels, labels)


def _raw_newsgroups():
    raw = zlib.decompress(datasets.gensim_test_file("mini_newsgroup").read_bytes())
    return gensim_text._NewsgroupUnpickler(io.BytesIO(raw), encoding="latin1").load()


@needs_gensim
def test_newsgroup_posts():
    texts, labels, names = datasets.newsgroup_posts()
    assert names == ["alt.atheism", "sci.space"]
    assert len(texts) == 200 and labels.shape == (200,) and labels.dtype == np.int64
    assert np.bincount(labels).tolist() == [100, 100]
    assert all(isinstance(t, str) and t for t in texts)
    # Headers (they name the group) and quoted replies are gone.
    for marker in ("Newsgroups:", "Path:", "Message-ID:", "Lines:", "writes:", "MB>"):
        assert not any(marker in t for t in texts), marker
    assert texts[0] == ("Another mistake. Sorry, I should have read alt.,messianic "
                        "more carefully. Benedikt")
    again = datasets.newsgroup_posts()
    assert again[0] == texts and np.array_equal(again[1], labels)


@needs_gensim
def test_newsgroup_labels_match_the_posts_group():
    _, labels, names = datasets.newsgroup_posts()
    bunch = _raw_newsgroups()
    assert sorted(bunch) == ["DESCR", "data", "filenames", "target", "target_names"]
    for label, post, filename in zip(labels, bunch["data"], bunch["filenames"]):
        header = post.partition("\n\n")[0]
        groups = re.search("^Newsgroups: (.*)$", header, re.MULTILINE).group(1)
        assert names[label] in groups.replace(" ", "").split(",")
        assert f"/{names[label]}/" in filename.decode()


def test_newsgroup_unpickler_refuses_other_classes():
    payload = pickle.dumps(Fraction(1, 2), protocol=2)
    with pytest.raises(pickle.UnpicklingError, match="may not load fractions.Fraction"):
        gensim_text._NewsgroupUnpickler(io.BytesIO(payload)).load()


def test_word_similarity_pairs_errors():
    with pytest.raises(ValueError, match="name='men3000'"):
        datasets.word_similarity_pairs("men3000")


@needs_gensim
def test_word_similarity_pairs():
    wordsim = datasets.word_similarity_pairs("wordsim353")
    simlex = datasets.word_similarity_pairs("simlex999")
    assert len(wordsim) == 353 and len(simlex) == 999
    assert wordsim[0] == ("love", "sex", 6.77)


@needs_gensim
def test_wikipedia_articles():
    articles = datasets.wikipedia_articles()
    assert len(articles) == 97 and len(set(articles)) == 97
    assert sum(len(a) for a in articles) > 2_500_000
    assert articles[0].startswith("Anarchism is a political philosophy")
    for marker in ("[[", "]]", "{{", "}}", "'''", "|", "File:", "==", "<ref"):
        assert not any(marker in a for a in articles), marker
    assert len(datasets.sentences(articles)) > 15_000
    articles.clear()  # the cached copy is not the caller's list
    assert len(datasets.wikipedia_articles()) == 97
