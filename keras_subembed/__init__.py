"""keras_subembed: compressed token embeddings for Keras that ship to phones.

`import keras_subembed` registers every layer and model class with Keras, so
`keras.saving.load_model` reads any file this package wrote. `export`,
`datasets`, `evaluation` (TensorFlow's converter, gensim, scikit-learn) load
on first use.
"""

import importlib

__version__ = "0.3.0"

# Imported here, not lazily: Keras finds a saved class only once its module
# has registered it.
from keras_subembed import layers  # noqa: E402
from keras_subembed import models  # noqa: E402
from keras_subembed.models.compression.compression import compress  # noqa: E402

_LAZY_SUBPACKAGES = ("assignment", "datasets", "evaluation", "export", "optimizers", "recipe")
__all__ = ["__version__", "compress", "layers", "models", *_LAZY_SUBPACKAGES]


def __getattr__(name):
    if name in _LAZY_SUBPACKAGES:
        return importlib.import_module(f"keras_subembed.{name}")
    raise AttributeError(f"module 'keras_subembed' has no attribute {name!r}")
