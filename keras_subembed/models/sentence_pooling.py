"""Deprecated: keras-hub's `TextEmbedder`s pool and normalise sentence vectors."""

import keras

from keras_subembed.checks import check_bool
from keras_subembed.deprecation import warn_deprecated
from keras_subembed.models.sentence_vectors import POOLING_MODES
from keras_subembed.models.sentence_vectors import sentence_vectors


@keras.saving.register_keras_serializable(package="keras_subembed")
class SentencePooling(keras.layers.Layer):
    """Deprecated alias of keras-hub's sentence head (`sentence_vectors`).

    Kept so code and `.keras` files of release 0.2 keep working; warns once.
    Use a keras-hub `TextEmbedder` (`pooling_mode`, `normalize`) instead.
    """

    def __init__(self, mode="mean", normalize=True, **kwargs):
        warn_deprecated("SentencePooling", "a keras-hub TextEmbedder's `pooling_mode`")
        super().__init__(**kwargs)
        if mode not in POOLING_MODES:
            raise ValueError(f"`mode` must be one of {POOLING_MODES}. Received: mode={mode!r}")
        self.mode = mode
        self.normalize = check_bool("normalize", normalize)

    def call(self, states, padding_mask):
        return sentence_vectors(states, padding_mask, self.mode, self.normalize)

    def compute_output_shape(self, states_shape, padding_mask_shape=None):
        return (states_shape[0], states_shape[-1])

    def get_config(self):
        config = super().get_config()
        config.update({"mode": self.mode, "normalize": self.normalize})
        return config
