"""Per-language quality of a sentence encoder against a reference, with intervals."""

import numpy as np

from keras_subembed.checks import check_positive_int
from keras_subembed.checks import check_seed
from keras_subembed.evaluation.metrics import bootstrap_interval
from keras_subembed.evaluation.metrics import mean_cosine
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
    locale's interval resamples its messages; the mean's resamples the English messages,
    which every locale shares, jointly. A difference to the reference is paired by message.
    Each direction also reports the mean margin per locale (`margin`, `mean_margin`): the
    right translation's cosine minus the best wrong one's, which moves before recall does.

    Args:
        held_out: `{language: [text, ...]}`, text no model trained on.
        preprocessor: the models' keras-hub preprocessor (token ids and padding mask).
        english: optional list of English messages.
        translations: `{locale: [text, ...]}`, row i the translation of `english[i]`.
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
        for locale, texts in translations.items():
            if len(texts) != len(english):
                raise ValueError(
                    f"`translations[{locale!r}]` must hold one translation per English message "
                    f"({len(english)}). Received: {len(texts)}")
        if translations and len(english) < 2:
            raise ValueError(f"`english` must hold at least 2 messages. Received: {len(english)}")
        self.rounds = check_positive_int("rounds", rounds)
        self.seed = check_seed(seed)
        self.languages = sorted(held_out)
        self.locales = sorted(translations)
        self.texts = {f"held_out/{language}": list(held_out[language])
                      for language in self.languages}
        if self.locales:
            self.texts["english"] = list(english)
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
        hits = {direction: (margin > 0).astype("float64") for direction, margin in margins.items()}
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
            row[direction]["mean_margin"] = round(float(np.mean(margins[direction])), 4)
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
            margins[direction] = np.stack([
                translation_margins(vectors[_name(queries, locale)],
                                    index[_name(candidates, locale)])[0]
                for locale in self.locales])
        return margins

    def _summary(self, hits, reference_hits):
        def interval(values, reference=None):
            if np.ptp(values if reference is None else values - reference) == 0:
                mean = float(np.mean(values if reference is None else values - reference))
                return [round(mean, 4)] * 2  # no spread to resample
            low, high = bootstrap_interval(values, reference, rounds=self.rounds, seed=self.seed)
            return [round(low, 4), round(high, 4)]

        summary = {"accuracy": {}, "interval": {}, "difference": {}, "difference_interval": {}}
        for locale, own, reference in zip(self.locales, hits, reference_hits):
            summary["accuracy"][locale] = round(float(own.mean()), 4)
            summary["interval"][locale] = interval(own)
            summary["difference"][locale] = round(float(own.mean() - reference.mean()), 4)
            summary["difference_interval"][locale] = interval(own, reference)
        # Every locale translates the same English messages: resample messages, not cells.
        own, reference = hits.mean(axis=0), reference_hits.mean(axis=0)
        summary.update(mean_accuracy=round(float(own.mean()), 4), mean_interval=interval(own),
                       mean_difference=round(float(own.mean() - reference.mean()), 4),
                       mean_difference_interval=interval(own, reference))
        return summary


def _name(side, locale):
    return "english" if side == "english" else f"translated/{locale}"
