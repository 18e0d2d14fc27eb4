"""keras-hub's `BertTextEmbedder` over a compressed `BertBackbone`."""

import keras
import keras_hub

from keras_subembed.models.families.compressed_bert_backbone import CompressedBertBackbone
from keras_subembed.models.families.compressed_text_embedder import compressed_text_embedder


@keras.saving.register_keras_serializable(package="keras_subembed")
@compressed_text_embedder
class CompressedBertTextEmbedder(keras_hub.models.BertTextEmbedder):
    """A `BertTextEmbedder` (BERT, MiniLM, multilingual-e5) whose token table is compressed.

    What `keras_subembed.compress` returns for a `BertTextEmbedder`, with its
    preprocessor and pooling, and what keras-hub's
    `TextEmbedder.from_preset` loads from a preset saved from one. Inputs
    are checked as `CompressedTextEmbedder` says (its methods, by the decorator).

    Example:
    >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "city", "rain"]
    >>> preprocessor = keras_hub.models.BertTextEmbedderPreprocessor(
    ...     keras_hub.models.BertTokenizer(vocabulary=vocabulary), sequence_length=8)
    >>> backbone = keras_hub.models.BertBackbone(vocabulary_size=8, num_layers=1,
    ...     num_heads=2, hidden_dim=8, intermediate_dim=16, max_sequence_length=8)
    >>> embedder = keras_hub.models.BertTextEmbedder(backbone, preprocessor)
    >>> small = keras_subembed.compress(embedder, "sub", {"num_tables": 2,
    ...     "rows_per_table": 4})
    >>> type(small).__name__, small.encode_text(["rain in the city"]).shape
    ('CompressedBertTextEmbedder', (1, 8))
    """

    backbone_cls = CompressedBertBackbone
