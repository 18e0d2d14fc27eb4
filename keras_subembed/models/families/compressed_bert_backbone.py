"""The compressed form of keras-hub's `BertBackbone`."""

import keras
import keras_hub

from keras_subembed.models.families.compressed_backbone import CompressedBackbone


@keras.saving.register_keras_serializable(package="keras_subembed")
class CompressedBertBackbone(CompressedBackbone):
    """A `CompressedBackbone` made from a keras-hub `BertBackbone`.

    What `compress_backbone` returns for BERT and MiniLM encoders
    (all-MiniLM-L6-v2, multilingual-e5-small): a class of its own, so that
    keras-hub's `BertTextEmbedder.from_preset` finds
    `CompressedBertTextEmbedder` for a preset saved from one.

    Example:
    >>> backbone = keras_hub.models.BertBackbone(vocabulary_size=100, num_layers=1,
    ...     num_heads=2, hidden_dim=8, intermediate_dim=16, max_sequence_length=8)
    >>> small = keras_subembed.models.compress_backbone(backbone, "sub",
    ...     {"num_tables": 2, "rows_per_table": 16})
    >>> type(small).__name__, small.max_sequence_length
    ('CompressedBertBackbone', 8)
    """

    source_cls = keras_hub.models.BertBackbone
