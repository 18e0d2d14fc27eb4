"""Per-language cosine and retrieval against a reference, with paired intervals."""

import re

import keras_hub
import numpy as np
import pytest

from keras_subembed.evaluation import LanguageEvaluation

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c", "d", "e", "f", "g", "h"]


@pytest.fixture
def preprocessor():
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=WORDS)
    return keras_hub.models.BertTextEmbedderPreprocessor(tokenizer, sequence_length=6)


def one_hot_runner(noise=0.0, swap=()):
    """Each text's vector: the one-hot of its first word (swapped words give wrong answers)."""
    def run(ids, mask):
        first = np.asarray(ids)[:, 1].copy()
        for a, b in swap:
            is_a, is_b = first == a, first == b
            first[is_a], first[is_b] = b, a
        vectors = np.eye(len(WORDS))[first] + noise
        return vectors.astype("float32")
    return run


def evaluation(preprocessor, rounds=200):
    english = ["a", "b", "c", "d", "e", "f"]
    return LanguageEvaluation({"en": ["a b", "c d"], "fr": ["e f", "g h"]}, preprocessor,
                              english, {"fr": list(english), "de": list(english)},
                              rounds=rounds)


def test_the_reference_against_itself_is_exact(preprocessor):
    row = evaluation(preprocessor).measure(one_hot_runner())
    assert row["cosine"] == {"en": 1.0, "fr": 1.0} and row["cosine_min"] == 1.0
    for direction in ("english_to_locale", "locale_to_english", "query_to_teacher_index"):
        assert row[direction]["accuracy"] == {"de": 1.0, "fr": 1.0}
        assert row[direction]["difference"] == {"de": 0.0, "fr": 0.0}
        assert row[direction]["mean_difference_interval"] == [0.0, 0.0]


def test_a_model_that_confuses_two_words_loses_their_pairs_with_an_interval(preprocessor):
    measured = evaluation(preprocessor)
    measured.measure(one_hot_runner())
    # "a" and "b" swapped: English "a" finds "b"; 2 of 6 messages wrong in every locale.
    row = measured.measure(one_hot_runner(swap=[(5, 6)]))
    scores = row["english_to_locale"]
    # Queries and candidates are both swapped: the model's own index still pairs them.
    assert scores["accuracy"] == {"de": 1.0, "fr": 1.0}
    against_teacher = row["query_to_teacher_index"]
    assert against_teacher["accuracy"] == {"de": pytest.approx(4 / 6, abs=1e-4),
                                           "fr": pytest.approx(4 / 6, abs=1e-4)}
    assert against_teacher["difference"]["fr"] == pytest.approx(-2 / 6, abs=1e-4)
    low, high = against_teacher["difference_interval"]["fr"]
    assert low <= -2 / 6 <= high and high <= 0
    assert row["cosine"]["en"] == pytest.approx(0.5, abs=1e-4)  # "a b" now reads as "b"


def test_each_direction_reports_the_mean_margin_per_locale(preprocessor):
    measured = evaluation(preprocessor)
    # One-hot vectors: the right translation at cosine 1, every wrong one at 0.
    row = measured.measure(one_hot_runner())
    for direction in ("english_to_locale", "locale_to_english", "query_to_teacher_index"):
        assert row[direction]["margin"] == {"de": 1.0, "fr": 1.0}
        assert row[direction]["mean_margin"] == 1.0
    # "a" and "b" swapped: against the teacher's index 2 of 6 queries find the wrong one,
    # each by the full cosine (margin -1), the other 4 keep margin 1.
    row = measured.measure(one_hot_runner(swap=[(5, 6)]))
    assert row["query_to_teacher_index"]["margin"]["fr"] == pytest.approx((4 - 2) / 6, abs=1e-4)
    assert row["english_to_locale"]["mean_margin"] == 1.0


def test_texts_can_be_embedded_by_a_runtime_that_tokenizes_itself(preprocessor):
    measured = evaluation(preprocessor)
    reference = measured.measure(one_hot_runner())

    def embed_texts(texts):
        return np.stack([np.eye(len(WORDS))[WORDS.index(text.split()[0])] for text in texts])

    assert measured.measure(embed_texts=embed_texts) == reference


def test_bad_arguments_are_refused_by_name(preprocessor):
    with pytest.raises(TypeError, match="`held_out` must be a non-empty dict"):
        LanguageEvaluation({}, preprocessor)
    with pytest.raises(ValueError, match="`english` and `translations` go together"):
        LanguageEvaluation({"en": ["a"]}, preprocessor, english=["a", "b"])
    with pytest.raises(ValueError, match=r"`translations\['fr'\]` must hold one translation"):
        LanguageEvaluation({"en": ["a"]}, preprocessor, ["a", "b"], {"fr": ["a"]})
    with pytest.raises(ValueError, match="Pass exactly one of `run_batch` and `embed_texts`"):
        evaluation(preprocessor).measure()


def test_locales_may_translate_their_own_messages_and_a_named_set_reports_beside(preprocessor):
    english = {"fr": ["a", "b", "c", "d"], "de": ["e", "f", "g"],
               "django/fr": ["a", "b"], "django/de": ["a", "b"]}
    measured = LanguageEvaluation({"en": ["a b"]}, preprocessor, english,
                                  {locale: list(texts) for locale, texts in english.items()},
                                  rounds=200)
    assert measured.texts["english"] == ["e", "f", "g", "a", "b", "c", "d"]  # each once
    measured.measure(one_hot_runner())
    # "a" and "b" swapped in the model only: against the teacher's index, 2 of fr's 4
    # messages and both of the Django set's are lost; de's are kept.
    scores = measured.measure(one_hot_runner(swap=[(5, 6)]))["query_to_teacher_index"]
    assert scores["accuracy"] == {"de": 1.0, "django/de": 0.0, "django/fr": 0.0, "fr": 0.5}
    # The mean is the unnamed locales': each weighs the same (not 5 of 7 messages).
    assert scores["mean_accuracy"] == 0.75 and scores["mean_difference"] == -0.25
    low, high = scores["mean_difference_interval"]
    assert -0.5 <= low < -0.25 < high <= 0  # fr's messages resampled, de's exact
    assert scores["sets"] == {"django": {"mean_accuracy": 0.0, "mean_interval": [0.0, 0.0],
                                         "mean_difference": -1.0,
                                         "mean_difference_interval": [-1.0, -1.0]}}


def test_per_locale_english_is_checked_by_name(preprocessor):
    with pytest.raises(ValueError, match=re.escape(
            "`english` as a dict must name the locales of `translations`. "
            "Received: ['de'] and ['fr']")):
        LanguageEvaluation({"en": ["a"]}, preprocessor, {"de": ["a", "b"]}, {"fr": ["a", "b"]})
    with pytest.raises(ValueError, match=re.escape(
            "`translations['fr']` must hold one translation per English message (3). Received: 2")):
        LanguageEvaluation({"en": ["a"]}, preprocessor, {"fr": ["a", "b", "c"]}, {"fr": ["a", "b"]})
    with pytest.raises(TypeError, match=re.escape(
            "`english` must be a list of texts or a dict {locale: list of texts}. Received: english='ab'")):
        LanguageEvaluation({"en": ["a"]}, preprocessor, "ab", {"fr": ["a", "b"]})
    with pytest.raises(ValueError, match=re.escape(
            "`translations` must hold at least one locale outside a named set (`set/locale`). "
            "Received: ['django/fr']")):
        LanguageEvaluation({"en": ["a"]}, preprocessor, ["a", "b"], {"django/fr": ["a", "b"]})
