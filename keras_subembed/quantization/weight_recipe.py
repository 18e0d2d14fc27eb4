"""How a recipe stores a model's kernels: one rounding, per-scope overrides."""

import dataclasses
import re

from keras_subembed.quantization.kernel_rounding import KernelRounding

# Every kernel path: a recipe's own rounding applies to the whole model.
ANY_SCOPE = r""
# A layer path (a Keras variable path, or a .tflite op's scope, where
# TensorFlow appends `_<n>` to each name) inside a transformer layer.
TRANSFORMER_SCOPE = r"transformer_layer_\d+(_\d+)?/"


@dataclasses.dataclass(frozen=True)
class WeightRecipe:
    """How one recipe stores the transformer's kernels.

    `activations` is `"dynamic"` (the kernels compute in integers on
    activations quantized at run time: fast) or `"float"` (weight-only: the
    kernels are dequantized and compute in float). `overrides` are
    `(scope regex, KernelRounding)` pairs; the last one matching a layer's
    path wins, as in `ai-edge-quantizer`. `table_bits=8` stores the file's
    float lookup tables as int8 (None: float).
    """

    name: str
    rounding: KernelRounding
    activations: str
    overrides: tuple = ()
    description: str = ""
    table_bits: int = None

    def scopes(self):
        """`(regex, KernelRounding)` rules over layer paths; the last match wins."""
        return ((ANY_SCOPE, self.rounding),) + tuple(
            (f"{TRANSFORMER_SCOPE}.*{pattern}", rounding) for pattern, rounding in self.overrides)

    def rounding_for(self, path):
        """The rounding of the kernel at `path`, or None when it stays float."""
        found = None
        for pattern, rounding in self.scopes():
            if re.search(pattern, path):
                found = rounding
        return found
