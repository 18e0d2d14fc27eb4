"""TextSets: a shared English list or each locale's own, with a named set beside."""

import re

import pytest

from keras_subembed.recipe import TextSets


def test_each_locale_may_translate_its_own_messages_and_the_summary_counts_each_set():
    sets = TextSets(["a b"], {"en": ["c d"]},
                    english={"fr": ["one", "two", "six"], "de": ["one", "two"],
                             "django/fr": ["x", "y"]},
                    translations={"fr": ["un", "deux", "six!"], "de": ["eins", "zwei"],
                                  "django/fr": ["ex", "why"]})
    assert sets.summary() == (
        "1 training texts, 0 training pairs; held out: 1 texts in 1 languages; 2-3 English "
        "messages translated in each of 2 locales; set django: 2 English messages translated "
        "in each of 1 locales")
    assert sets.evaluated() == ["c d", "one", "two", "six", "one", "two", "x", "y", "un", "deux",
                                "six!", "eins", "zwei", "ex", "why"]


def test_bad_evaluation_arguments_are_named():
    with pytest.raises(TypeError, match=re.escape(
            "`english['fr']` must be a list of strings. Received: english['fr']='one'")):
        TextSets(["a"], {"en": ["b"]}, english={"fr": "one"}, translations={"fr": ["un"]})
    with pytest.raises(ValueError, match=re.escape(
            "`evaluation` must be 'django' or 'fine'. Received: evaluation='coarse'")):
        TextSets.multilingual(evaluation="coarse")
    with pytest.raises(ValueError, match=re.escape(
            "`fine_messages` must be a positive integer. Received: fine_messages=0 (of type int).")):
        TextSets.multilingual(evaluation="fine", fine_messages=0)
