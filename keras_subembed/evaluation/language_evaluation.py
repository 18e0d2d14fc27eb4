"""Per-language quality of a sentence encoder against a reference, with intervals."""

import numpy as np

from keras_subembed.checks import check_positive_int
from keras_subembed.checks import check_seed
from keras_subembed.evaluation.metrics import bootstrap_interval
from keras_subembed.evaluation.metrics import mean_cosine
from keras_subembed.evaluation.metrics import stratified_bootstrap_interval
from keras_subembed.evaluation.retrieval import translation_margins
from keras_subembed.evaluation.tokenized_texts import TokenizedTexts

# The three retrievals a row reports: the model's own index in both directions, and
# its English queries against the reference's index of the translations (a server index
# built with the teacher stays usable).
DIRECTIONS = ("english_to_locale", "locale_to_english", "query_to_teacher_index")


class LanguageEvaluation:
    """Held-out cosine per language and translation retrieval per locale, each against a
    reference model (the first one measured: the teacher), with 95% bootstrap intervals.

    Retrieval is recall@1 of a text's translation among all the locale's candidates. Each
    locale's interval resamples its messages. The mean over locales resamples the English
    messages jointly where every locale translates the same ones (one list), and each
    locale's on its own otherwise (`{locale: list}`, a stratified bootstrap). A difference
    to the reference is paired by message. Each direction also reports the mean margin per
    locale (`margin`, `mean_margin`): the right translation's cosine minus the best wrong
    one's, which moves before recall does.

    A locale named `"set/locale"` (e.g. `"django/fr"`) belongs to a named set: its rows are
    reported, its mean goes under `sets[set]`, and the `mean_*` figures (what the verdict
    reads) are the other locales'.

    Args:
        held_out: `{language: [text, ...]}`, text no model trained on.
        preprocessor: the models' keras-hub preprocessor (token ids and padding mask).
        english: optional list of English messages that every locale translates, or
            `{locale: [text, ...]}`, each locale's own.
        translations: `{locale: [text, ...]}`, row i the translation of English row i.
        rounds: bootstrap rounds. seed: the bootstrap's seed.

    Example:
    ```python
    evaluation = LanguageEvaluation({"en": texts}, teacher.preprocessor, english,
                                    {"fr": french, "de": german})
    teacher_row = evaluation.measure(keras_runner(teacher))   # the reference
    row = evaluation.measure(tflite_runner("student.int4_dynamic.tflite"))
    row["english_to_locale"]["difference"]["fr"]
    ```
    """

    def __init__(self, held_out, preprocessor, english=None, translations=None, rounds=2000,
                 seed=0):
        if not isinstance(held_out, dict) or not held_out or not all(
                isinstance(texts, (list, tuple)) and texts for texts in held_out.values()):
            raise TypeError("`held_out` must be a non-empty dict {language: non-empty list of "
                            f"texts}}. Received: {type(held_out).__name__}")
        if (english is None) != (translations is None):
            raise ValueError("`english` and `translations` go together: pass both or neither.")
        translations = dict(translations or {})
        english_of = _english_by_locale(english, translations)
        self.rounds = check_positive_int("rounds", rounds)
        self.seed = check_seed(seed)
        self.languages = sorted(held_out)
        self.locales = sorted(translations)
        self.sets = {}
        for locale in self.locales:
            self.sets.setdefault(locale.rpartition("/")[0], []).append(locale)
        if self.locales and "" not in self.sets:
            raise ValueError("`translations` must hold at least one locale outside a named set "
                             f"(`set/locale`). Received: {self.locales}")
        self.texts = {f"held_out/{language}": list(held_out[language])
                      for language in self.languages}
        if self.locales:
            # Each English text embedded once, whichever locales translate it.
            unique = list(dict.fromkeys(text for locale in self.locales
                                        for text in english_of[locale]))
            row_of = {text: row for row, text in enumerate(unique)}
            self._english_rows = {locale: np.array([row_of[text] for text in english_of[locale]])
                                  for locale in self.locales}
            self.texts["english"] = unique
            self.texts.update({f"translated/{locale}": list(translations[locale])
                               for locale in self.locales})
        self.preprocessor = preprocessor
        self._tokenized = None
        self.reference = None  # the first model's vectors and hits

    @property
    def text_count(self):
        return sum(len(texts) for texts in self.texts.values())

    def measure(self, run_batch=None, embed_texts=None):
        """One model's row: `run_batch(token_ids, padding_mask) -> vectors` (Keras, LiteRT,
        ONNX Runtime), or `embed_texts(list of str) -> vectors` for a runtime that
        tokenizes itself (MediaPipe). The first model measured is the reference."""
        if (run_batch is None) == (embed_texts is None):
            raise ValueError("Pass exactly one of `run_batch` and `embed_texts`.")
        if run_batch is not None:
            if self._tokenized is None:
                self._tokenized = {name: TokenizedTexts(texts, self.preprocessor)
                                   for name, texts in self.texts.items()}
            vectors = {name: tokenized.embed(run_batch)
                       for name, tokenized in self._tokenized.items()}
        else:
            vectors = {name: np.asarray(embed_texts(texts), "float32")
                       for name, texts in self.texts.items()}
        margins = self._margins(vectors)
        hits = {direction: [(values > 0).astype("float64") for values in margin]
                for direction, margin in margins.items()}
        if self.reference is None:
            self.reference = {"vectors": vectors, "hits": hits}
        reference = self.reference
        cosine = {language: round(mean_cosine(vectors[f"held_out/{language}"],
                                              reference["vectors"][f"held_out/{language}"]), 4)
                  for language in self.languages}
        row = {"cosine": cosine, "cosine_min": min(cosine.values()),
               "cosine_mean": round(float(np.mean(list(cosine.values()))), 4)}
        for direction in DIRECTIONS if self.locales else ():
            row[direction] = self._summary(hits[direction], reference["hits"][direction])
            # The right translation's cosine over the best wrong one's: it moves before a
            # pair is lost, where recall moves in whole pairs.
            row[direction]["margin"] = {locale: round(float(np.mean(margin)), 4) for locale, margin
                                        in zip(self.locales, margins[direction])}
            row[direction]["mean_margin"] = round(float(np.mean(
                [np.mean(margins[direction][self.locales.index(locale)])
                 for locale in self.sets[""]])), 4)
        return row

    def _margins(self, vectors):
        if not self.locales:
            return {}
        reference = self.reference["vectors"] if self.reference else vectors
        pairs = {"english_to_locale": ("english", "translated", vectors),
                 "locale_to_english": ("translated", "english", vectors),
                 "query_to_teacher_index": ("english", "translated", reference)}
        margins = {}
        for direction, (queries, candidates, index) in pairs.items():
            margins[direction] = [
                translation_margins(self._side(vectors, queries, locale),
                                    self._side(index, candidates, locale))[0]
                for locale in self.locales]
        return margins

    def _side(self, vectors, side, locale):
        if side == "english":
            return vectors["english"][self._english_rows[locale]]
        return vectors[f"translated/{locale}"]

    def _interval(self, groups, reference=None):
        """The bootstrap interval of the mean of `groups`' means (one group: a plain
        bootstrap; several: stratified), of the difference to `reference`'s when given."""
        differences = groups if reference is None else [
            values - other for values, other in zip(groups, reference)]
        spread = np.concatenate(differences)
        if np.ptp(spread) == 0:
            return [round(float(spread[0]), 4)] * 2  # no spread to resample
        if len(groups) == 1:
            low, high = bootstrap_interval(groups[0], None if reference is None else reference[0],
                                           rounds=self.rounds, seed=self.seed)
        else:
            low, high = stratified_bootstrap_interval(groups, reference, rounds=self.rounds,
                                                      seed=self.seed)
        return [round(low, 4), round(high, 4)]

    def _mean_summary(self, locales, hits, reference_hits):
        """The mean over `locales` and its interval, paired with the reference's."""
        index = [self.locales.index(locale) for locale in locales]
        own, reference = [hits[i] for i in index], [reference_hits[i] for i in index]
        mean = float(np.mean([values.mean() for values in own]))
        difference = mean - float(np.mean([values.mean() for values in reference]))
        rows = [self._english_rows[locale] for locale in locales]
        if all(np.array_equal(rows[0], other) for other in rows):
            # The same English messages in every locale: resample messages, not cells.
            own, reference = [np.mean(own, axis=0)], [np.mean(reference, axis=0)]
        interval, difference_interval = self._interval(own), self._interval(own, reference)
        return {"mean_accuracy": round(mean, 4), "mean_interval": interval,
                "mean_difference": round(difference, 4),
                "mean_difference_interval": difference_interval}

    def _summary(self, hits, reference_hits):
        summary = {"accuracy": {}, "interval": {}, "difference": {}, "difference_interval": {}}
        for locale, own, reference in zip(self.locales, hits, reference_hits):
            summary["accuracy"][locale] = round(float(own.mean()), 4)
            summary["interval"][locale] = self._interval([own])
            summary["difference"][locale] = round(float(own.mean() - reference.mean()), 4)
            summary["difference_interval"][locale] = self._interval([own], [reference])
        summary.update(self._mean_summary(self.sets[""], hits, reference_hits))
        named = {name: self._mean_summary(locales, hits, reference_hits)
                 for name, locales in self.sets.items() if name}
        if named:
            summary["sets"] = named
        return summary


def _english_by_locale(english, translations):
    """`{locale: English list}` from one shared list or a dict, each checked against its
    translations."""
    if english is None:
        return {}
    if isinstance(english, dict):
        if sorted(english) != sorted(translations):
            raise ValueError("`english` as a dict must name the locales of `translations`. "
                             f"Received: {sorted(english)} and {sorted(translations)}")
        english_of = dict(english)
    elif isinstance(english, (list, tuple)):
        english_of = dict.fromkeys(translations, english)
    else:
        raise TypeError("`english` must be a list of texts or a dict {locale: list of texts}. "
                        f"Received: english={english!r:.100}")
    for locale, texts in translations.items():
        if len(texts) != len(english_of[locale]):
            raise ValueError(
                f"`translations[{locale!r}]` must hold one translation per English message "
                f"({len(english_of[locale])}). Received: {len(texts)}")
        if len(texts) < 2:
            raise ValueError(f"`english` must hold at least 2 messages for {locale!r}. "
                             f"Received: {len(texts)}")
    return english_of
