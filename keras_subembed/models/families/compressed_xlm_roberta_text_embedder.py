"""keras-hub's `XLMRobertaTextEmbedder` over a compressed `XLMRobertaBackbone`."""

import keras
import keras_hub

from keras_subembed.models.families.compressed_text_embedder import compressed_text_embedder
from keras_subembed.models.families.compressed_xlm_roberta_backbone import (
    CompressedXLMRobertaBackbone,
)


@keras.saving.register_keras_serializable(package="keras_subembed")
@compressed_text_embedder
class CompressedXLMRobertaTextEmbedder(keras_hub.models.XLMRobertaTextEmbedder):
    """An `XLMRobertaTextEmbedder` whose 250k-token table is compressed.

    `keras_subembed.compress` makes one of an `XLMRobertaTextEmbedder`;
    keras-hub's `XLMRobertaTextEmbedder.from_preset` (and
    `TextEmbedder.from_preset`) loads one back from its preset. Inputs are
    checked as `CompressedTextEmbedder` says.

    Example:
    >>> encoder = keras_hub.models.XLMRobertaBackbone(vocabulary_size=50,
    ...     num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=16,
    ...     max_sequence_length=8)
    >>> embedder = keras_hub.models.XLMRobertaTextEmbedder(encoder)
    >>> compressed = keras_subembed.compress(embedder, "embedding")
    >>> ids = {"token_ids": np.array([[0, 7, 9, 2]]),
    ...        "padding_mask": np.array([[1, 1, 1, 1]])}
    >>> isinstance(compressed, CompressedXLMRobertaTextEmbedder), compressed.predict(
    ...     ids, verbose=0).shape
    (True, (1, 8))
    """

    backbone_cls = CompressedXLMRobertaBackbone
