"""The compressed form of keras-hub's `XLMRobertaBackbone`."""

import keras
import keras_hub

from keras_subembed.models.families.compressed_backbone import CompressedBackbone


@keras.saving.register_keras_serializable(package="keras_subembed")
class CompressedXLMRobertaBackbone(CompressedBackbone):
    """A `CompressedBackbone` made from a keras-hub `XLMRobertaBackbone`.

    `compress_backbone` returns one for an XLM-RoBERTa encoder (its
    250,002-token SentencePiece table is where compression pays most);
    `CompressedXLMRobertaTextEmbedder` is the embedder keras-hub's
    `XLMRobertaTextEmbedder.from_preset` builds over it.

    Example:
    >>> encoder = keras_hub.models.XLMRobertaBackbone(vocabulary_size=120,
    ...     num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=16,
    ...     max_sequence_length=8)
    >>> compressed = keras_subembed.compress(encoder, "sub",
    ...     {"num_tables": 2, "rows_per_table": 16})
    >>> isinstance(compressed, CompressedXLMRobertaBackbone)
    True
    """

    source_cls = keras_hub.models.XLMRobertaBackbone
