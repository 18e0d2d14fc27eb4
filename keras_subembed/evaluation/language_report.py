"""The per-language report of a shrink: which files keep each language, as JSON, Markdown
and a plot."""

import json
import pathlib
import tempfile

from keras_subembed import files
from keras_subembed.checks import check_bool
from keras_subembed.checks import check_non_negative_number
from keras_subembed.evaluation.language_evaluation import DIRECTIONS
from keras_subembed.evaluation.metrics import plot_quality_vs_size
from keras_subembed.evaluation.size_frontier import SizeFrontier
from keras_subembed.evaluation.verdict import LOCALE_FLOOR
from keras_subembed.evaluation.verdict import WITHIN
from keras_subembed.evaluation.verdict import smallest_passing
from keras_subembed.evaluation.verdict import verdict
from keras_subembed.tflite_metadata import WRITTEN_BY

REPORT_FILES = ("report.json", "report.md", "report.png")


def _pct(value):
    return f"{100 * value:.1f}"


def _with_interval(value, interval, signed=False):
    form = "{:+.1f}" if signed else "{:.1f}"
    return f"{form.format(100 * value)} [{form.format(100 * interval[0])}, " \
           f"{form.format(100 * interval[1])}]"


def markdown(rows, title, within=WITHIN, locale_floor=LOCALE_FLOOR):
    """The report as Markdown: a summary per file, then a row per locale and per language."""
    lines = [f"<!-- {WRITTEN_BY} language report -->", f"# {title}", ""]
    has_retrieval = any("english_to_locale" in row for row in rows)
    lines += ["| file | MB | " + ("en->loc [95%] | vs teacher | loc->en | q->T idx | "
                                  if has_retrieval else "") + "cos min | verdict |",
              "| --- | ---: | " + ("---: | ---: | ---: | ---: | " if has_retrieval else "")
              + "---: | --- |"]
    for row in rows:
        cells = [row["name"], f"{row['file_mb']:.1f}" if row.get("file_mb") else "-"]
        if has_retrieval:
            scores = row["english_to_locale"]
            cells += [_with_interval(scores["mean_accuracy"], scores["mean_interval"]),
                      _with_interval(scores["mean_difference"], scores["mean_difference_interval"],
                                     signed=True),
                      _pct(row["locale_to_english"]["mean_accuracy"]),
                      _pct(row["query_to_teacher_index"]["mean_accuracy"])]
        judged = verdict(row, within, locale_floor)
        text = ("reference" if row.get("reference") else "-" if judged["passes"] is None
                else "keeps it" if judged["passes"]
                else "misses" + (f" ({', '.join(judged['failing_locales'])} below)"
                                 if judged["failing_locales"] else " (mean)"))
        cells += [f"{row['cosine_min']:.3f}", text]
        lines.append("| " + " | ".join(cells) + " |")
    smallest = smallest_passing(rows, within, locale_floor)
    if not has_retrieval:
        # A verdict about retrieval with no translations to retrieve would read as a failure.
        lines += ["", "No translated messages were given: no retrieval was measured and no "
                  "file is judged; compare the files by their held-out cosine to the teacher."]
    else:
        lines += ["", f"Verdict: a file keeps the teacher's retrieval when its mean English -> "
                  f"locale recall@1 is within {100 * within:g} points and no locale's 95% "
                  f"interval lies wholly more than {100 * locale_floor:g} points below."]
        if smallest:
            closest = verdict(smallest, within, locale_floor)["closest_locales"]
            lines.append(f"**Smallest file that keeps it: {smallest['name']}, "
                         f"{smallest['file_mb']:.1f} MB.** The locales that decide it (lowest "
                         f"differences): {', '.join(closest)}.")
        else:
            lines.append("**No file keeps it.**")
    files_ = [row for row in rows if not row.get("reference")]
    if has_retrieval:
        for direction in DIRECTIONS:
            lines += ["", f"## {direction.replace('_', ' ')}: recall@1 (points), the file's "
                      "difference to the teacher [95%]", "",
                      "| locale | teacher | " + " | ".join(r["name"] for r in files_) + " |",
                      "| --- | ---: | " + " | ".join("---:" for _ in files_) + " |"]
            reference = next(r for r in rows if r.get("reference"))[direction]
            for locale in sorted(reference["accuracy"]):
                cells = [locale, _pct(reference["accuracy"][locale])]
                for row in files_:
                    scores = row[direction]
                    cells.append(f"{_pct(scores['accuracy'][locale])} ("
                                 + _with_interval(scores["difference"][locale],
                                                  scores["difference_interval"][locale],
                                                  signed=True) + ")")
                lines.append("| " + " | ".join(cells) + " |")
            for name, scores in sorted(reference.get("sets", {}).items()):
                cells = [f"**{name}** (mean)", _pct(scores["mean_accuracy"])]
                cells += [f"{_pct(row[direction]['sets'][name]['mean_accuracy'])} ("
                          + _with_interval(row[direction]["sets"][name]["mean_difference"],
                                           row[direction]["sets"][name]["mean_difference_interval"],
                                           signed=True) + ")" for row in files_]
                lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## Held-out cosine to the teacher, per language", "",
              "| language | " + " | ".join(r["name"] for r in files_) + " |",
              "| --- | " + " | ".join("---:" for _ in files_) + " |"]
    for language in sorted(rows[0]["cosine"]):
        lines.append(f"| {language} | "
                     + " | ".join(f"{row['cosine'][language]:.3f}" for row in files_) + " |")
    return "\n".join(lines) + "\n"


def _is_report(folder):
    return files.is_json_report(pathlib.Path(folder, "report.json"))


def write_language_report(rows, folder, title="Per-language report", overwrite=False,
                          within=WITHIN, locale_floor=LOCALE_FLOOR, frontier=None):
    """Writes `report.json`, `report.md` and `report.png` (retrieval against file size) into
    `folder`, each atomically; `overwrite` replaces only a report this function wrote.

    `rows` are `LanguageEvaluation.measure` rows with a `name`, the reference's first with
    `"reference": True`, and `file_mb` for every file. With retrieval, the plot is the size
    frontier (`SizeFrontier`): these files, and `frontier`'s (files made before on the same
    evaluation, marks, targets), which the Markdown and JSON list too. Returns the paths.

    Example:
    ```python
    write_language_report([{"name": "teacher", "reference": True, **teacher_row},
                           {"name": "student.int4.tflite", "file_mb": 30.6, **row}], "out")
    ```
    """
    overwrite = check_bool("overwrite", overwrite)
    within = check_non_negative_number("within", within)
    locale_floor = check_non_negative_number("locale_floor", locale_floor)
    if not isinstance(title, str):
        raise TypeError(f"`title` must be a str. Received: title={title!r}")
    if isinstance(rows, (str, dict)) or not all(isinstance(row, dict) for row in rows):
        raise TypeError(f"`rows` must be a list of dicts. Received: rows={rows!r:.100}")
    rows = list(rows)
    if not rows or not rows[0].get("reference"):
        raise ValueError("`rows` must start with the reference's row (`\"reference\": True`).")
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    ours = lambda path: _is_report(folder)  # noqa: E731: the three files go together
    paths = [files.check_file_target(folder / name, overwrite, ours, "a report this package "
                                     "wrote") for name in REPORT_FILES]
    if frontier is not None and not isinstance(frontier, SizeFrontier):
        raise TypeError(f"`frontier` must be a SizeFrontier or None. Received: {frontier!r:.100}")
    smallest = smallest_passing(rows, within, locale_floor)
    summary = {"title": title, "rows": rows, "written_by": WRITTEN_BY,
               "verdicts": {row["name"]: verdict(row, within, locale_floor) for row in rows},
               "smallest_passing": smallest["name"] if smallest else None,
               "within": within, "locale_floor": locale_floor}
    text = markdown(rows, title, within, locale_floor)
    sized = [row for row in rows if row.get("file_mb")]
    retrieval = "english_to_locale" in rows[0]
    if retrieval:
        drawn = SizeFrontier(within, locale_floor)
        drawn.add_report(rows)
        if frontier is not None:
            drawn.extend(frontier)
        summary["frontier"] = drawn.points
        if any(point["earlier"] for point in drawn.points):
            text += "\n## Size frontier: these files and those made before\n\n" + drawn.markdown()
    elif frontier is not None and frontier.points:
        raise ValueError("`frontier` holds files judged by retrieval, and `rows` measured none "
                         "(no translations): the report cannot draw them beside its files.")
    with tempfile.TemporaryDirectory() as scratch:
        image = pathlib.Path(scratch, "report.png")
        if retrieval and drawn.points:
            drawn.plot(image, title=title)
        elif sized:
            plot_quality_vs_size([{"name": row["name"], "file_mb": row["file_mb"],
                                   "cosine_min": row["cosine_min"]} for row in sized],
                                 image, quality="cosine_min", title=title,
                                 axis_labels={"file_mb": "file size (MB)",
                                              "cosine_min": "lowest held-out cosine"})
        # The JSON last: it is what proves the three files are ours.
        for path, data in ((paths[1], text.encode()),
                           (paths[2], image.read_bytes() if image.exists() else None),
                           (paths[0], json.dumps(summary, indent=1).encode())):
            if data is not None:
                files.write_file(path, data, overwrite, ours)
    return [path for path in paths if path.exists()]
