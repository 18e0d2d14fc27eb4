"""Whether a file keeps the reference's retrieval: the mean within a margin, and no locale
clearly below a floor."""

# The verdict's default clauses: the mean English -> locale recall within 2 points of the
# teacher's, and no locale clearly (its whole 95% interval) more than 5 points below.
WITHIN = 0.02
LOCALE_FLOOR = 0.05


def verdict(row, within=WITHIN, locale_floor=LOCALE_FLOOR):
    """Whether `row` (a `LanguageEvaluation.measure` row) keeps the reference's retrieval,
    and which locales decide it.

    Returns `{"passes", "mean_difference", "failing_locales", "closest_locales"}`: a locale
    fails when its whole interval of the difference lies below `-locale_floor` (a
    named set's, `django/fr`, is not judged); the closest locales are the three lowest
    differences (what would fail first).

    >>> row = {"english_to_locale": {"mean_difference": -0.01,
    ...        "difference": {"fr": -0.02, "he": -0.06},
    ...        "difference_interval": {"fr": [-0.05, 0.0], "he": [-0.1, -0.03]}}}
    >>> verdict(row)["passes"]
    True
    """
    scores = row.get("english_to_locale")
    if scores is None:  # no translations: nothing to judge by retrieval
        return {"passes": None, "mean_difference": None, "failing_locales": [],
                "closest_locales": []}
    # A named set's locales (`django/fr`) are reported beside, not judged.
    judged = [locale for locale in scores["difference"] if "/" not in locale]
    failing = sorted(locale for locale in judged
                     if scores["difference_interval"][locale][1] < -locale_floor)
    closest = sorted(judged, key=scores["difference"].get)[:3]
    passes = scores["mean_difference"] >= -within and not failing
    return {"passes": bool(passes), "mean_difference": scores["mean_difference"],
            "failing_locales": failing, "closest_locales": closest}


def smallest_passing(rows, within=WITHIN, locale_floor=LOCALE_FLOOR):
    """The smallest row with a `file_mb` whose `verdict` passes (the teacher's rows aside),
    or None."""
    passing = [row for row in rows if row.get("file_mb") and not row.get("reference")
               and verdict(row, within, locale_floor)["passes"]]
    return min(passing, key=lambda row: row["file_mb"], default=None)
