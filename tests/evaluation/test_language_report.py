"""The per-language report: its verdict, its Markdown, and files that are never lost."""

import json

import pytest

from keras_subembed.evaluation.verdict import verdict
from keras_subembed.evaluation.language_report import write_language_report


def row(name, mean, differences, file_mb=None, reference=False):
    scores = {"accuracy": {loc: 0.8 + d for loc, d in differences.items()},
              "interval": {loc: [0.7 + d, 0.9 + d] for loc, d in differences.items()},
              "difference": dict(differences),
              "difference_interval": {loc: [d - 0.02, d + 0.02] for loc, d in differences.items()},
              "mean_accuracy": 0.8 + mean, "mean_interval": [0.75 + mean, 0.85 + mean],
              "mean_difference": mean, "mean_difference_interval": [mean - 0.01, mean + 0.01]}
    return {"name": name, "file_mb": file_mb, "reference": reference,
            "cosine": {"en": 1.0 if reference else 0.98, "fr": 1.0 if reference else 0.97},
            "cosine_min": 1.0 if reference else 0.97, "english_to_locale": scores,
            "locale_to_english": scores, "query_to_teacher_index": scores}


ROWS = [row("teacher", 0.0, {"fr": 0.0, "he": 0.0}, reference=True),
        row("big.tflite", -0.01, {"fr": 0.0, "he": -0.04}, file_mb=30.0),
        row("small.tflite", -0.01, {"fr": 0.0, "he": -0.08}, file_mb=20.0),  # he clearly below
        row("tiny.tflite", -0.03, {"fr": -0.03, "he": -0.03}, file_mb=10.0)]  # mean below


def test_the_report_is_written_and_replaced_only_when_asked(tmp_path):
    paths = write_language_report(ROWS, tmp_path, title="t")
    assert sorted(path.name for path in paths) == ["report.json", "report.md", "report.png"]
    summary = json.loads((tmp_path / "report.json").read_text())
    assert summary["smallest_passing"] == "big.tflite"
    assert summary["verdicts"]["small.tflite"]["failing_locales"] == ["he"]
    markdown = (tmp_path / "report.md").read_text()
    assert "**Smallest file that keeps it: big.tflite, 30.0 MB.**" in markdown
    assert "| he | 80.0 | 76.0 (-4.0 [-6.0, -2.0]) |" in markdown
    assert "misses (he below)" in markdown
    assert (tmp_path / "report.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(FileExistsError, match="overwrite=True"):
        write_language_report(ROWS, tmp_path)
    write_language_report(ROWS[:2], tmp_path, overwrite=True)
    assert "small.tflite" not in (tmp_path / "report.md").read_text()


def test_a_users_file_of_the_same_name_is_never_replaced(tmp_path):
    (tmp_path / "report.md").write_text("my notes")
    for overwrite in (False, True):
        with pytest.raises(FileExistsError):
            write_language_report(ROWS, tmp_path, overwrite=overwrite)
    assert (tmp_path / "report.md").read_text() == "my notes"
    assert not (tmp_path / "report.json").exists()
    with pytest.raises(ValueError, match="must start with the reference's row"):
        write_language_report(ROWS[1:], tmp_path / "other")


def test_a_named_set_is_reported_as_one_row_and_not_judged(tmp_path):
    def with_django(name, mean, differences, **kwargs):
        made = row(name, mean, {**differences, "django/he": -0.2}, **kwargs)
        for scores in (made["english_to_locale"], made["locale_to_english"]):
            scores["sets"] = {"django": {"mean_accuracy": 0.8 + mean, "mean_interval": [0.7, 0.9],
                                         "mean_difference": mean,
                                         "mean_difference_interval": [mean - 0.02, mean + 0.02]}}
        made["query_to_teacher_index"] = made["locale_to_english"]
        return made

    rows = [with_django("teacher", 0.0, {"fr": 0.0}, reference=True),
            with_django("small.tflite", -0.01, {"fr": 0.0}, file_mb=20.0)]
    # django/he's interval lies wholly 20 points below: reported, not judged.
    assert verdict(rows[1]) == {"passes": True, "mean_difference": -0.01,
                                "failing_locales": [], "closest_locales": ["fr"]}
    write_language_report(rows, tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert "| **django** (mean) | 80.0 | 79.0 (-1.0 [-3.0, +1.0]) |" in text
    assert "| django/he | 60.0 | 60.0 (-20.0 [-22.0, -18.0]) |" in text


def test_without_translations_no_file_is_judged_on_retrieval(tmp_path):
    # English alone (the MiniLM job): cosine rows, no retrieval, so no verdict about it.
    rows = [{key: value for key, value in made.items()
             if key not in ("english_to_locale", "locale_to_english", "query_to_teacher_index")}
            for made in ROWS[:2]]
    write_language_report(rows, tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert "no retrieval was measured and no file is judged" in text
    assert "Verdict:" not in text and "No file keeps it" not in text
    assert "| big.tflite | 30.0 | 0.970 | - |" in text
