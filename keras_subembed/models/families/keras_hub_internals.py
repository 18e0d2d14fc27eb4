"""The one module that imports keras-hub's private code (`keras_hub.src`).

keras-hub exports no public name for what is imported here. Keeping every
such import in this file means a keras-hub release that moves one breaks
one line, found at import time, and nothing else in the package depends on
keras-hub's layout.

* `preprocessing_function`: the decorator keras-hub puts on a
  preprocessor's `_call_tf` (tf.data inputs converted to tf tensors on the
  CPU, outputs converted back for the backend). A subclass that overrides
  `_call_tf`, as `CompressedRobertaMaskedLMPreprocessor` does, must apply it
  too.
"""

from keras_hub.src.utils.tensor_utils import preprocessing_function  # noqa: F401 (re-exported)
