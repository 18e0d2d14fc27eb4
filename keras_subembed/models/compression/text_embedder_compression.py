"""`compress_text_embedder`: a keras-hub `TextEmbedder` copied with a compressed token table."""

import keras_hub

from keras_subembed.checks import check_bool
from keras_subembed.checks import check_positive_int
from keras_subembed.models.compression.backbone_compression import compress_backbone
from keras_subembed.models.families.compressed_bert_text_embedder import CompressedBertTextEmbedder
from keras_subembed.models.families.compressed_xlm_roberta_text_embedder import (
    CompressedXLMRobertaTextEmbedder,
)

# keras-hub's embedder class -> the compressed one.
COMPRESSED_TEXT_EMBEDDERS = {
    keras_hub.models.BertTextEmbedder: CompressedBertTextEmbedder,
    keras_hub.models.XLMRobertaTextEmbedder: CompressedXLMRobertaTextEmbedder,
}


def compressed_embedder_class(embedder):
    """The compressed class for a keras-hub embedder (or a compressed one), else TypeError."""
    for source_cls, compressed_cls in COMPRESSED_TEXT_EMBEDDERS.items():
        if type(embedder) in (source_cls, compressed_cls):
            return compressed_cls
    supported = ", ".join(cls.__name__ for cls in COMPRESSED_TEXT_EMBEDDERS)
    raise TypeError(
        f"Cannot compress a {type(embedder).__name__}: supported TextEmbedders are "
        f"{supported} (and their compressed versions). Compress the backbone of "
        "another model with `compress(model.backbone, ...)`."
    )


def compress_text_embedder(
    embedder, embedding="sub", embedding_kwargs=None, verbose=False, max_sequence_length=None
):
    """A keras-hub `TextEmbedder` with its backbone's token table compressed.

    The backbone goes through `compress_backbone` (every other weight
    copied); the preprocessor and the pooling (`pooling_mode`, `normalize`)
    are the embedder's own. A `BertTextEmbedder` comes back as a
    `CompressedBertTextEmbedder` (a `BertTextEmbedder` subclass), and so on.

    Example:
    ```python
    embedder = keras_hub.models.TextEmbedder.from_preset(minilm_preset_dir())
    small = compress_text_embedder(embedder, "sub", {"assignment": "product",
        "num_tables": 32, "rows_per_table": 256})
    small.encode_text(["A sentence."]).shape
    # (1, 384)
    ```
    """
    embedder_cls = compressed_embedder_class(embedder)
    verbose = check_bool("verbose", verbose)
    if max_sequence_length is not None:
        max_sequence_length = check_positive_int("max_sequence_length", max_sequence_length)
    length = getattr(embedder.preprocessor, "sequence_length", None)
    if max_sequence_length is not None and isinstance(length, int) and length > max_sequence_length:
        raise ValueError(
            f"The embedder's preprocessor packs {length} tokens, more than "
            f"`max_sequence_length={max_sequence_length}`: set "
            f"`embedder.preprocessor.sequence_length` to at most {max_sequence_length} first."
        )
    backbone = compress_backbone(
        embedder.backbone, embedding, embedding_kwargs, verbose=verbose,
        max_sequence_length=max_sequence_length)
    return embedder_cls(
        backbone,
        preprocessor=embedder.preprocessor,
        pooling_mode=embedder.pooling_mode,
        normalize=embedder.normalize,
        name=embedder.name,
    )
