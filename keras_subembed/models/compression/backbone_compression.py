"""`compress_backbone`: a keras-hub text encoder copied with a compressed token table."""

import keras

from keras_subembed.checks import check_bool
from keras_subembed.checks import check_positive_int
from keras_subembed.models.families.backbone_graph import check_copyable
from keras_subembed.models.families.backbone_graph import embedding_node
from keras_subembed.models.families.backbone_weights import copy_non_embedding_weights
from keras_subembed.models.families.compressed_backbone import CompressedBackbone
from keras_subembed.models.families.compressed_bert_backbone import CompressedBertBackbone
from keras_subembed.models.families.compressed_xlm_roberta_backbone import (
    CompressedXLMRobertaBackbone,
)
from keras_subembed.models.families.pretrained_embedding import dense_table
from keras_subembed.models.families.pretrained_embedding import pretrained_token_embedding

# The families with a class of their own; other encoders become a
# `CompressedBackbone`.
COMPRESSED_BACKBONE_FAMILIES = (CompressedBertBackbone, CompressedXLMRobertaBackbone)


def compressed_backbone_class(backbone):
    """The class `compress_backbone` makes of `backbone`: its family's (for the
    keras-hub source class or the compressed one, compressed again), else
    `CompressedBackbone`."""
    for family in COMPRESSED_BACKBONE_FAMILIES:
        if type(backbone) in (family, family.source_cls):
            return family
    return CompressedBackbone


def shortened_config(backbone, max_sequence_length):
    """`backbone`'s serialized config, reading at most `max_sequence_length` positions."""
    config = keras.saving.serialize_keras_object(backbone)
    if max_sequence_length is None:
        return config
    max_sequence_length = check_positive_int("max_sequence_length", max_sequence_length)
    limit = config["config"].get("max_sequence_length")
    if not isinstance(limit, int):
        raise ValueError(
            f"`max_sequence_length` shortens a backbone's position table; a "
            f"{type(backbone).__name__} has no `max_sequence_length` of its own. "
            "Shorten the backbone it was made from."
        )
    if max_sequence_length > limit:
        raise ValueError(
            f"`max_sequence_length` can only shorten the model: its position table has "
            f"{limit} rows. Received: max_sequence_length={max_sequence_length}"
        )
    config["config"]["max_sequence_length"] = max_sequence_length
    return config


def compress_backbone(
    backbone, embedding="sub", embedding_kwargs=None, verbose=False, max_sequence_length=None
):
    """A copy of a keras-hub text encoder with a compressed token embedding.

    The token table of `backbone` is replaced by `embedding`, initialised
    from the pretrained table (see `pretrained_token_embedding`: product or
    clustered codes and least-squares sub-tables for `"sub"`); every other
    weight (positions, segments, layer norms, transformer layers, pooler) is
    copied exactly. `embedding="embedding"` makes a dense copy whose outputs
    equal the original's.

    Args:
        backbone: a keras-hub `BertBackbone`, `RobertaBackbone`,
            `XLMRobertaBackbone`, `DistilBertBackbone`, or this package's
            `CompressedRobertaBackbone` / `CompressedBackbone`.
        embedding: `"sub"`, `"define"`, `"alone"`, `"embedding"` or a layer
            with the backbone's `input_dim` and `output_dim`.
        embedding_kwargs: constructor arguments for a short name, e.g.
            `{"num_tables": 2, "rows_per_table": 1024}` for `"sub"`.
        verbose: print the progress of clustering.
        max_sequence_length: optional; keep only the first this many rows of
            the position table (e.g. 256 for all-MiniLM-L6-v2, which was
            trained on 256 tokens but carries 512 positions: 0.39 MB less in
            every file). The model then refuses longer inputs.

    Returns:
        A `CompressedBackbone` (same inputs and outputs as `backbone`).

    Example:
    ```python
    teacher = keras_hub.models.BertBackbone.from_preset(minilm_preset_dir())
    student = compress_backbone(teacher, "sub",
        {"num_tables": 2, "rows_per_table": 1024})
    ```
    """
    embedding_node(backbone)  # a clear error before any work
    check_copyable(backbone)
    verbose = check_bool("verbose", verbose)
    source_config = shortened_config(backbone, max_sequence_length)
    source_embedding = backbone.token_embedding
    token_embedding = pretrained_token_embedding(
        dense_table(source_embedding),
        embedding,
        embedding_kwargs,
        name=source_embedding.name,
        dtype=source_embedding.dtype_policy,
        verbose=verbose,
    )
    compressed_cls = compressed_backbone_class(backbone)
    compressed = compressed_cls(
        backbone=source_config,
        token_embedding=token_embedding,
        name=backbone.name,
    )
    copy_non_embedding_weights(backbone, compressed)
    return compressed
