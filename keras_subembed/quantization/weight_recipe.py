"""How a recipe stores a model's kernels: one rounding, per-scope overrides."""

import dataclasses
import re

from keras_subembed.checks import check_choice
from keras_subembed.checks import is_integer
from keras_subembed.quantization.kernel_rounding import KernelRounding

# Every kernel path: a recipe's own rounding applies to the whole model.
ANY_SCOPE = r""
# A layer path (a Keras variable path, or a .tflite op's scope, where
# TensorFlow appends `_<n>` to each name) inside a transformer layer.
TRANSFORMER_SCOPE = r"transformer_layer_\d+(_\d+)?/"
ACTIVATIONS = ("dynamic", "float")
TABLE_BITS = (8,)


@dataclasses.dataclass(frozen=True)
class WeightRecipe:
    """How one recipe stores the transformer's kernels.

    `activations` is `"dynamic"` (the kernels compute in integers on
    activations quantized at run time: fast) or `"float"` (weight-only: the
    kernels are dequantized and compute in float). `overrides` are
    `(scope regex, KernelRounding)` pairs; the last one matching a layer's
    path wins, as in `ai-edge-quantizer`. `table_bits=8` stores the file's
    float lookup tables, and a compressed embedding's rotation, as int8 (None: float).
    """

    name: str
    rounding: KernelRounding
    activations: str
    overrides: tuple = ()
    description: str = ""
    table_bits: int = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"`name` must be a non-empty string. Received: name={self.name!r}")
        if not isinstance(self.rounding, KernelRounding):
            raise ValueError("`rounding` must be a KernelRounding. "
                             f"Received: rounding={self.rounding!r}")
        check_choice("activations", self.activations, ACTIVATIONS)
        overrides = self.overrides
        if not isinstance(overrides, (tuple, list)) or not all(
                isinstance(pair, (tuple, list)) and len(pair) == 2 and isinstance(pair[0], str)
                and isinstance(pair[1], KernelRounding) for pair in overrides):
            raise ValueError("`overrides` must be a tuple of (scope regex, KernelRounding) "
                             f"pairs. Received: overrides={overrides!r}")
        for pattern, _ in overrides:
            try:
                re.compile(pattern)
            except re.error as error:
                raise ValueError(f"`overrides` holds the scope {pattern!r}, not a regular "
                                 f"expression ({error}). Received: overrides={overrides!r}")
        object.__setattr__(self, "overrides", tuple(tuple(pair) for pair in overrides))
        if not any(self.table_bits is bits or (is_integer(self.table_bits)
                                               and self.table_bits == bits)
                   for bits in (None,) + TABLE_BITS):
            raise ValueError(f"`table_bits` must be {' or '.join(map(str, TABLE_BITS))} or "
                             f"None. Received: table_bits={self.table_bits!r}")
        if not isinstance(self.description, str):
            raise ValueError("`description` must be a string. "
                             f"Received: description={self.description!r}")

    def get_config(self):
        """A JSON-ready dict; `WeightRecipe.from_config` gives the recipe back."""
        return dataclasses.asdict(self)

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["rounding"] = KernelRounding(**config["rounding"])
        config["overrides"] = tuple((pattern, KernelRounding(**rounding))
                                    for pattern, rounding in config.get("overrides", ()))
        return cls(**config)

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
