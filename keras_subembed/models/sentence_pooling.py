"""Token states -> one vector per sentence (mean, CLS or max pooling), L2-normalised."""

import keras
from keras import ops

POOLING_MODES = ("mean", "cls", "max")


@keras.saving.register_keras_serializable(package="keras_subembed")
class SentencePooling(keras.layers.Layer):
    """Pools `(batch, length, d)` token states over the valid tokens.

    `"mean"` averages the states where `padding_mask` is set (as
    sentence-transformers' mean pooling), `"cls"` takes the first token,
    `"max"` the largest value of each feature over the valid tokens. With
    `normalize=True` (default) the result has unit L2 norm, so a dot product
    of two sentence vectors is their cosine.

    Example:
    >>> states = np.ones((2, 5, 8), "float32")
    >>> mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], "int32")
    >>> SentencePooling("mean")(states, mask).shape
    (2, 8)
    """

    def __init__(self, mode="mean", normalize=True, **kwargs):
        super().__init__(**kwargs)
        if mode not in POOLING_MODES:
            raise ValueError(
                f"`mode` must be one of {POOLING_MODES}. Received: mode={mode!r}"
            )
        if not isinstance(normalize, bool):
            raise TypeError(f"`normalize` must be a bool. Received: normalize={normalize!r}")
        self.mode = mode
        self.normalize = normalize

    def call(self, states, padding_mask):
        mask = ops.expand_dims(ops.cast(padding_mask, states.dtype), axis=-1)
        if self.mode == "cls":
            pooled = states[:, 0, :]
        elif self.mode == "mean":
            # An all-padding row averages to 0, not NaN.
            pooled = ops.sum(states * mask, axis=1) / ops.maximum(ops.sum(mask, axis=1), 1.0)
        else:
            lowest = ops.cast(ops.min(states) - 1.0, states.dtype)
            pooled = ops.max(ops.where(mask > 0, states, lowest), axis=1)
        if self.normalize:
            # The same epsilon as sentence-transformers' Normalize (torch's F.normalize).
            norm = ops.sqrt(ops.sum(ops.square(pooled), axis=-1, keepdims=True))
            pooled = pooled / ops.maximum(norm, 1e-12)
        return pooled

    def compute_output_shape(self, states_shape, padding_mask_shape=None):
        return (states_shape[0], states_shape[-1])

    def get_config(self):
        config = super().get_config()
        config.update({"mode": self.mode, "normalize": self.normalize})
        return config
