"""What `shrink` returns, as it prints."""

from keras_subembed.recipe.shrink_result import ShrinkResult
from tests.evaluation.test_language_report import ROWS

FILES = {"tflite": "out/small.tflite"}


def test_it_names_the_files_and_the_smallest_that_keeps_retrieval():
    text = str(ShrinkResult(None, "split-h8k-k64", FILES, ROWS, "big.tflite", 61.7))
    assert text.splitlines() == ["shrink: split-h8k-k64, 62 s", "  tflite: out/small.tflite",
                                 "  smallest file that keeps the teacher's retrieval: big.tflite"]
    assert str(ShrinkResult(None, "split-h8k-k64", FILES, ROWS)).endswith("retrieval: none")


def test_without_translations_it_says_nothing_was_judged():
    rows = [{key: value for key, value in row.items() if key != "english_to_locale"}
            for row in ROWS]
    assert str(ShrinkResult(None, "product-k8m16", FILES, rows)).endswith(
        "retrieval: not judged (no translated messages)")
