"""keras_subembed: compressed token embeddings for Keras that ship to phones."""

__version__ = "0.1.0"

from keras_subembed import assignment  # noqa: E402
from keras_subembed import export  # noqa: E402
from keras_subembed import layers  # noqa: E402
from keras_subembed import models  # noqa: E402

__all__ = ["__version__", "assignment", "export", "layers", "models"]
