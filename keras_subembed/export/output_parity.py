"""How far a file's outputs (LiteRT, ONNX Runtime, MediaPipe) are from Keras', held to a format's tolerance."""

import statistics
import time

import numpy as np

from keras_subembed.export.errors import ExportVerificationError

# What a float32 file may err by (a fraction of the largest |Keras output|, at
# least 1): float arithmetic in another order. Held to the rounded model, no
# file is asked to come closer than this.
FLOAT32_TOLERANCE = 1e-4
# Dynamic range and recipes: the file may err at most this many times the
# error of the Keras model with its weights rounded as the file stores them.
# A genuine file errs about 1.3 times that; a wrong table (a noisy copy) 8 times.
ROUNDING_ERROR_FACTOR = 4.0


class OutputParity:
    """Largest error, largest |Keras value| and row cosines of each output, over calls.

    `add(got, want, rounded)` takes one call's `{output name: array}` from
    the file, from Keras and (optionally) from Keras with its weights rounded
    as the file stores them; `check(...)` holds every output to a format's
    `tolerance` times its largest |Keras value| (at least 1),
    to `ROUNDING_ERROR_FACTOR` times the rounded model's own error when
    given, and to a lowest mean cosine when given. Any NaN or infinity,
    in the file's outputs or in Keras', fails: no error is measured on it.
    """

    def __init__(self, what):
        self.what = what  # "The .onnx file", for messages
        self.errors, self.scales, self.cosines, self.rounding_errors = {}, {}, {}, {}

    def add(self, got, want, rounded=None):
        if set(got) != set(want):
            raise ExportVerificationError(
                f"{self.what} gives outputs {sorted(got)}; Keras gives {sorted(want)}.")
        for name, value in want.items():
            value, have = np.asarray(value, "float64"), np.asarray(got[name])
            if have.shape != value.shape:
                raise ExportVerificationError(
                    f"{self.what} gives {name!r} of shape {have.shape}; Keras gives {value.shape}.")
            self.check_finite(value, f"Keras' output {name!r}")
            self.check_finite(have, f"{self.what}'s output {name!r}")
            self.errors[name] = max(self.errors.get(name, 0.0), float(np.max(np.abs(have - value))))
            self.scales[name] = max(self.scales.get(name, 0.0), float(np.max(np.abs(value))))
            self.cosines.setdefault(name, []).extend(row_cosines(have, value))
            if rounded is not None:
                reference = np.asarray(rounded[name], "float64")
                self.check_finite(reference, f"Keras' output {name!r} with rounded weights")
                self.rounding_errors[name] = max(self.rounding_errors.get(name, 0.0),
                                                 float(np.max(np.abs(reference - value))))

    def check_finite(self, values, what):
        bad = int(np.size(values) - np.count_nonzero(np.isfinite(values)))
        if bad:
            raise ExportVerificationError(
                f"{what} holds {bad} NaN or infinite value(s) of {np.size(values)} on the "
                "verification inputs: a file cannot be verified against them. Check the "
                "model's weights for NaN or infinity."
            )

    def check(self, path, tolerance, min_cosine=None, named="tolerance"):
        """(max abs error, its tolerance, lowest mean cosine), or raise naming the
        worst output and the bound it broke (`named`, e.g. "TFLiteFormat.tolerances['dynamic']")."""
        tolerances = {name: tolerance * max(1.0, self.scales[name]) for name in self.errors}
        for name, error in self.rounding_errors.items():
            # Held to what the rounded weights can cause, so a file with other weights fails.
            floor = FLOAT32_TOLERANCE * max(1.0, self.scales[name])
            tolerances[name] = min(tolerances[name], max(ROUNDING_ERROR_FACTOR * error, floor))
        cosines = {name: float(np.mean(values)) for name, values in self.cosines.items()}
        failed = [name for name in self.errors if not (
            self.errors[name] <= tolerances[name]
            and (min_cosine is None or cosines[name] >= min_cosine))]
        if failed:
            worst = max(failed, key=lambda name: self.errors[name] - tolerances[name])
            floor = "" if min_cosine is None else f", at least {min_cosine}"
            raise ExportVerificationError(
                f"{self.what}'s output {worst!r} differs from Keras by up to "
                f"{self.errors[worst]:.3g} (tolerance {tolerances[worst]:.3g}: {named} = "
                f"{tolerance:g} of the largest |output|; mean cosine "
                f"{cosines[worst]:.5f}{floor}); {str(path)!r} was not written."
            )
        largest = max(self.errors, key=self.errors.get)
        return self.errors[largest], tolerances[largest], min(cosines.values())


def row_cosines(got, want):
    """Cosine of each row (last axis) of `got` to `want`; rows of zeros count 1 if equal."""
    got = np.asarray(got, "float64").reshape(-1, max(1, np.shape(got)[-1] if np.ndim(got) else 1))
    want = np.asarray(want, "float64").reshape(got.shape)
    norms = np.linalg.norm(got, axis=-1) * np.linalg.norm(want, axis=-1)
    dots = np.sum(got * want, axis=-1)
    same = np.all(got == want, axis=-1)
    return np.where(norms > 0, dots / np.where(norms > 0, norms, 1.0), np.where(same, 1.0, 0.0))


def median_ms(call, runs):
    """The median milliseconds of `call()` over `runs` calls, after one warm-up call."""
    call()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)
