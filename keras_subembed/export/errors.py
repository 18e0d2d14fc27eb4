"""Errors an export raises beyond the usual ValueError / TypeError / OSError."""


class ExportVerificationError(ValueError):
    """The `.tflite` file disagrees with Keras beyond the tolerance."""


class UnsupportedOpError(ValueError):
    """The model needs an op that is not a TFLite builtin."""


class UnsupportedBackendError(ValueError):
    """A live model on a backend other than TensorFlow cannot be exported."""
