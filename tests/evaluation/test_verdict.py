"""The verdict: the mean within a margin of the reference, and no locale clearly below."""

from keras_subembed.evaluation.verdict import smallest_passing
from keras_subembed.evaluation.verdict import verdict
from tests.evaluation.test_language_report import ROWS
from tests.evaluation.test_language_report import row


def test_the_verdict_names_the_locales_that_decide_it():
    assert verdict(ROWS[1]) == {"passes": True, "mean_difference": -0.01,
                                "failing_locales": [], "closest_locales": ["he", "fr"]}
    assert verdict(ROWS[2])["failing_locales"] == ["he"] and not verdict(ROWS[2])["passes"]
    assert not verdict(ROWS[3])["passes"]  # the mean is 3 points below
    # A locale whose interval reaches above -5 points is not clearly below.
    borderline = row("b", -0.01, {"fr": 0.0, "he": -0.06})
    borderline["english_to_locale"]["difference_interval"]["he"] = [-0.1, -0.04]
    assert verdict(borderline)["passes"]
    assert smallest_passing(ROWS)["name"] == "big.tflite"
