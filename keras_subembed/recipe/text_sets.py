"""The text a shrink trains and judges on: training text, translation pairs, held-out text
per language and parallel messages per locale."""

import dataclasses

import numpy as np

from keras_subembed import datasets
from keras_subembed.checks import check_non_negative_int
from keras_subembed.checks import check_positive_int
from keras_subembed.checks import check_seed
from keras_subembed.datasets.training_pairs import sample

# 23 Django locales over Latin, Cyrillic, Greek, Arabic, Hebrew, Devanagari, Bengali,
# Thai, Han, kana and Hangul scripts.
DEFAULT_LOCALES = ("ar", "bn", "cs", "de", "el", "es", "fa", "fr", "he", "hi", "id", "it", "ja",
                   "ko", "nl", "pl", "pt_BR", "ru", "th", "tr", "uk", "vi", "zh_Hans")


def _check_texts(name, texts):
    if isinstance(texts, str) or not isinstance(texts, (list, tuple)) or not all(
            isinstance(text, str) for text in texts):
        raise TypeError(f"`{name}` must be a list of strings. Received: {name}={texts!r:.100}")
    return list(texts)


@dataclasses.dataclass
class TextSets:
    """What `shrink` trains on and what it evaluates on, kept apart.

    Args:
        training: list of str, unlabelled training text (what the model will read).
        held_out: `{language: [text, ...]}` that no model trains on: the report's held-out
            cosine per language.
        pairs: list of `(text, translation)` training pairs (may be empty).
        english: list of English messages for retrieval that every locale translates (may
            be empty), or `{locale: [text, ...]}`, each locale's own.
        translations: `{locale: [text, ...]}`, row i the translation of English row i. A
            locale named `set/locale` (`django/fr`) belongs to a set reported beside.

    Example:
    ```python
    sets = TextSets(training=my_texts[:-100], held_out={"en": my_texts[-100:]})
    sets = TextSets.multilingual()          # the offline default: 38 languages, 23 locales
    sets = TextSets.multilingual(evaluation="fine")  # 600 messages in each of 45 locales
    ```
    """

    training: list
    held_out: dict
    pairs: list = dataclasses.field(default_factory=list)
    english: list = dataclasses.field(default_factory=list)
    translations: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        self.training = _check_texts("training", self.training)
        if not isinstance(self.held_out, dict) or not self.held_out:
            raise TypeError("`held_out` must be a non-empty dict {language: [text, ...]}. "
                            f"Received: held_out={self.held_out!r:.100}")
        for language, texts in self.held_out.items():
            if not _check_texts(f"held_out[{language!r}]", texts):
                raise ValueError(f"`held_out[{language!r}]` is empty.")
        if not isinstance(self.pairs, (list, tuple)) or not all(
                isinstance(pair, (list, tuple)) and len(pair) == 2
                and all(isinstance(text, str) for text in pair) for pair in self.pairs):
            raise TypeError("`pairs` must be a list of (text, translation) string pairs. "
                            f"Received: pairs={self.pairs!r:.100}")
        if isinstance(self.english, dict):
            self.english = {locale: _check_texts(f"english[{locale!r}]", texts)
                            for locale, texts in self.english.items()}
        else:
            self.english = _check_texts("english", self.english)
        if bool(self.english) != bool(self.translations):
            raise ValueError("`english` and `translations` go together: give both or neither.")

    @classmethod
    def multilingual(cls, training_per_language=300, held_out_per_language=12,
                     locales=DEFAULT_LOCALES, messages=None, training_catalog="wagtail",
                     training_pairs=6_000, pair_sampling_alpha=0.5, seed=0, evaluation="django",
                     fine_locales=None, fine_messages=datasets.MIN_MESSAGES):
        """The offline default: `dataset-build`'s prose in 38 languages (training and
        held-out sentences drawn per language), translation pairs from
        `training_catalog`'s interface catalogs (`datasets.draw_training_pairs`; `None`:
        prose alone) and, for retrieval, the English messages that every one of Django's
        `locales` translates (all of them, or `messages` drawn).

        `evaluation="fine"` retrieves `fine_messages` drawn from each of `fine_locales`'
        own messages (`datasets.evaluation_pairs`; None: its 45 locales), and keeps
        Django's messages beside as the set `django` (`django/fr`, ...): the figures
        measured before stay comparable."""
        training_per_language = check_positive_int("training_per_language",
                                                   training_per_language)
        held_out_per_language = check_positive_int("held_out_per_language",
                                                   held_out_per_language)
        training_pairs = check_non_negative_int("training_pairs", training_pairs)
        seed = check_seed(seed)
        if messages is not None:
            messages = check_positive_int("messages", messages)
        locales = check_locales(locales)
        if evaluation not in ("django", "fine"):
            raise ValueError("`evaluation` must be 'django' or 'fine'. "
                             f"Received: evaluation={evaluation!r}")
        fine_messages = check_positive_int("fine_messages", fine_messages)
        fine = {}
        if evaluation == "fine":
            # Before the prose and the model: a missing catalog package fails in seconds.
            fine = datasets.evaluation_pairs(fine_locales, fine_messages,
                                             training_catalog=training_catalog)
        # The training pairs first: a missing catalog package fails before the prose loads.
        pairs = []
        if training_catalog is not None and training_pairs:
            pairs, _ = datasets.draw_training_pairs(training_catalog, training_pairs,
                                                    pair_sampling_alpha, seed)
        rng = np.random.default_rng(seed)
        training, held_out = [], {}
        for language in datasets.multilingual_languages():
            training += sample(datasets.multilingual_sentences(language, "train"),
                               training_per_language, rng)
            held_out[language] = sample(datasets.multilingual_sentences(language, "held_out"),
                                        held_out_per_language, rng)
        english, translations = parallel_messages(locales, messages, rng)
        if fine:
            english = {**{locale: [source for source, _ in sample(found, fine_messages, rng)]
                          for locale, found in fine.items()},
                       **{f"django/{locale}": english for locale in translations}}
            translations = {**{locale: [dict(fine[locale])[text] for text in english[locale]]
                               for locale in fine},
                            **{f"django/{locale}": texts for locale, texts in translations.items()}}
        return cls(training, held_out, pairs, english, translations)

    def evaluated(self):
        """Every text the report embeds: held out, English and translated."""
        english = (self.english if isinstance(self.english, list)
                   else [text for group in self.english.values() for text in group])
        return ([text for group in self.held_out.values() for text in group] + english
                + [text for group in self.translations.values() for text in group])

    def summary(self):
        """One line of counts: the training text, the held-out text and, per set of
        locales, how many messages each locale translates."""
        counts = {}
        for locale, texts in self.translations.items():
            counts.setdefault(locale.rpartition("/")[0], []).append(len(texts))
        retrieval = "; ".join(
            f"{'set ' + name + ': ' if name else ''}"
            f"{min(found):,}{'' if min(found) == max(found) else f'-{max(found):,}'} English "
            f"messages translated in each of {len(found)} locales"
            for name, found in sorted(counts.items())) or "no translated messages"
        return (f"{len(self.training):,} training texts, {len(self.pairs):,} training pairs; "
                f"held out: {sum(map(len, self.held_out.values())):,} texts in "
                f"{len(self.held_out)} languages; {retrieval}")


def check_locales(locales):
    if isinstance(locales, str) or not isinstance(locales, (list, tuple)) or not all(
            isinstance(locale, str) for locale in locales):
        raise TypeError(f"`locales` must be a list of locale names. Received: {locales!r:.100}")
    return list(locales)


def parallel_messages(locales, count=None, rng=None):
    """The English messages that every one of Django's `locales` translates (all, or `count`
    drawn), and `{locale: translations}` in the same order."""
    if not locales:
        return [], {}
    catalogs = {locale: dict(datasets.django_translation_pairs(locale)) for locale in locales}
    shared = sorted(set.intersection(*map(set, catalogs.values())))
    if len(shared) < 2:
        raise ValueError(f"The locales {list(locales)} share {len(shared)} translated "
                         "messages; retrieval needs at least 2.")
    english = sample(shared, count or len(shared), rng or np.random.default_rng(0))
    return english, {locale: [catalogs[locale][text] for text in english] for locale in locales}
