"""How far a runtime's outputs (ONNX Runtime, MediaPipe) are from Keras', held to `TOLERANCES`."""

import statistics
import time

import numpy as np

from keras_subembed.export.errors import ExportVerificationError
from keras_subembed.export.tflite import TOLERANCES
from keras_subembed.export.tflite import row_cosines


class OutputParity:
    """Largest error, largest |Keras value| and row cosines of each output, over calls.

    `add(got, want)` takes one call's `{output name: array}` from the file and
    from Keras; `check(...)` holds every output to `TOLERANCES[quantization]`
    times its largest |Keras value| (at least 1), as `export_tflite` does,
    and to a lowest mean cosine when given.
    """

    def __init__(self, what):
        self.what = what  # "The .onnx file", for messages
        self.errors, self.scales, self.cosines = {}, {}, {}

    def add(self, got, want):
        if set(got) != set(want):
            raise ExportVerificationError(
                f"{self.what} gives outputs {sorted(got)}; Keras gives {sorted(want)}.")
        for name, value in want.items():
            value, have = np.asarray(value, "float64"), np.asarray(got[name])
            if have.shape != value.shape:
                raise ExportVerificationError(
                    f"{self.what} gives {name!r} of shape {have.shape}; Keras gives {value.shape}.")
            self.errors[name] = max(self.errors.get(name, 0.0), float(np.max(np.abs(have - value))))
            self.scales[name] = max(self.scales.get(name, 0.0), float(np.max(np.abs(value))))
            self.cosines.setdefault(name, []).extend(row_cosines(have, value))

    def check(self, quantization, path, min_cosine=None):
        """(max abs error, its tolerance, lowest mean cosine), or raise naming the worst output."""
        tolerances = {name: TOLERANCES[quantization] * max(1.0, self.scales[name])
                      for name in self.errors}
        cosines = {name: float(np.mean(values)) for name, values in self.cosines.items()}
        failed = [name for name in self.errors if not (
            self.errors[name] <= tolerances[name]
            and (min_cosine is None or cosines[name] >= min_cosine))]
        if failed:
            worst = max(failed, key=lambda name: self.errors[name] - tolerances[name])
            floor = "" if min_cosine is None else f", at least {min_cosine}"
            raise ExportVerificationError(
                f"{self.what}'s {worst!r} differs from Keras by up to {self.errors[worst]:.3g} "
                f"(tolerance {tolerances[worst]:.3g} for quantization={quantization!r}; mean "
                f"cosine {cosines[worst]:.5f}{floor}); {str(path)!r} was not written."
            )
        largest = max(self.errors, key=self.errors.get)
        return self.errors[largest], tolerances[largest], min(cosines.values())


def median_ms(call, runs):
    """The median milliseconds of `call()` over `runs` calls, after one warm-up call."""
    call()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)
