"""Training pairs from installed catalogs: language quotas, the seeded draw, Django kept out."""

import importlib.util

import pytest

from keras_subembed.datasets import training_pairs
from keras_subembed.datasets.training_pairs import catalog_training_pairs
from keras_subembed.datasets.training_pairs import draw_training_pairs
from keras_subembed.datasets.training_pairs import language_quotas
from tests.multilingual_utils import write_mo

needs_django = pytest.mark.skipif(importlib.util.find_spec("django") is None,
                                  reason="Django's catalogs (pip install --no-deps django)")


def test_language_quotas_flatten_the_shares_and_pass_on_what_a_small_catalog_lacks():
    counts = {"de": 900, "he": 100, "vi": 4}
    # 1: in proportion; 0.5: shares 30 : 10 : 2 of 21 pairs; 0: alike, Vietnamese's lack shared out.
    assert language_quotas(counts, 100, 1.0) == {"de": 90, "he": 10, "vi": 0}
    assert language_quotas(counts, 21, 0.5) == {"de": 15, "he": 5, "vi": 1}
    assert language_quotas(counts, 30, 0.0) == {"de": 13, "he": 13, "vi": 4}
    assert language_quotas(counts, 5_000, 0.5) == counts  # more than there are: all of them
    assert language_quotas({}, 10, 0.5) == {}


@pytest.mark.parametrize("arguments, message", [
    (({"de": 3}, 10, 1.5), "`alpha` must be a number in \\[0, 1\\]. Received: alpha=1.5"),
    (({"de": 3}, 10, float("nan")), "`alpha` must be a number in \\[0, 1\\]"),
    (({"de": 3}, 10, "0.5"), "`alpha` must be a number"),
    (({"de": 3}, -1, 0.5), "`total` must be an integer >= 0"),
    (({"de": 3}, 2.5, 0.5), "`total` must be an integer >= 0"),
])
def test_language_quotas_refuse_bad_arguments_by_name(arguments, message):
    with pytest.raises(ValueError, match=message):
        language_quotas(*arguments)
    with pytest.raises(TypeError, match="`counts` must be a dict"):
        language_quotas({"de": -1}, 10)


def test_the_drawn_pairs_follow_the_quotas_and_the_seed(monkeypatch):
    by_language = {"de": [(f"de {i}", f"Deutsch {i}") for i in range(900)],
                   "he": [(f"he {i}", f"עברית {i}") for i in range(100)]}
    monkeypatch.setattr(training_pairs, "catalog_training_pairs", lambda package: by_language)
    pairs, available = draw_training_pairs("any", 40)
    assert available == 1_000 and len(pairs) == len(set(pairs)) == 40
    assert sum(source.startswith("he") for source, _ in pairs) == 10  # 30 : 10 at alpha 0.5
    assert draw_training_pairs("any", 40)[0] == pairs
    assert draw_training_pairs("any", 40, seed=1)[0] != pairs
    proportional = draw_training_pairs("any", 40, alpha=1.0)[0]
    assert sum(source.startswith("he") for source, _ in proportional) == 4
    with pytest.raises(ValueError, match="`count` must be an integer >= 0"):
        draw_training_pairs("any", -3)


@needs_django
def test_training_pairs_leave_out_every_english_message_of_django(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    header = {"": "Content-Type: text/plain; charset=UTF-8\n"}
    # Django has "Change password" -> "Passwort ändern" and "first name" -> "Vorname".
    write_mo(tmp_path / "djangoish" / "locale" / "de" / "LC_MESSAGES" / "django.mo",
             {**header, "Change Password!": "Kennwort ändern", "First Name": "Vorname (Feld)",
              "Your first name": "Vorname", "Water the garden": "Den Garten gießen"})
    write_mo(tmp_path / "djangoish" / "locale" / "de_AT" / "LC_MESSAGES" / "django.mo",
             {**header, "Water the garden": "Den Garten gießen"})
    (tmp_path / "djangoish" / "__init__.py").write_text("")
    # Case, punctuation, a second locale of the language and a known translation give nothing.
    assert catalog_training_pairs("djangoish") == {"de": [("Water the garden",
                                                           "Den Garten gießen")]}
    with pytest.raises(ValueError, match="Django's catalogs are the evaluation's"):
        catalog_training_pairs("django")
