"""keras_subembed: compressed token embeddings for Keras that ship to phones.

Subpackages load on first use (`keras_subembed.layers` needs neither keras-hub
nor the export module): `assignment`, `datasets`, `evaluation`, `export`,
`layers`, `models`, `optimizers`.
"""

import importlib

__version__ = "0.2.0"

_SUBPACKAGES = ("assignment", "datasets", "evaluation", "export", "layers", "models", "optimizers")
__all__ = ["__version__", *_SUBPACKAGES]


def __getattr__(name):
    if name in _SUBPACKAGES:
        return importlib.import_module(f"keras_subembed.{name}")
    raise AttributeError(f"module 'keras_subembed' has no attribute {name!r}")
