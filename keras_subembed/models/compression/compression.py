"""`compress`: the one door from a keras-hub model to its compressed copy."""

import keras_hub

from keras_subembed.models.compression.backbone_compression import compress_backbone
from keras_subembed.models.compression.text_embedder_compression import compress_text_embedder


def compress(model, embedding="sub", embedding_kwargs=None, verbose=False,
             max_sequence_length=None):
    """A copy of a keras-hub model whose token table is compressed.

    Args:
        model: a keras-hub `TextEmbedder` (`BertTextEmbedder`, e.g.
            all-MiniLM-L6-v2; `XLMRobertaTextEmbedder`), which comes back as
            the same kind of embedder with its preprocessor and pooling; or a
            text-encoder `Backbone` (`BertBackbone`, `RobertaBackbone`,
            `XLMRobertaBackbone`, `DistilBertBackbone`, ...), which comes back
            as a `CompressedBackbone` with the same inputs and outputs.
        embedding: `"sub"`, `"define"`, `"alone"`, `"embedding"` (an exact
            dense copy) or a layer with the model's vocabulary size and width.
        embedding_kwargs: the kind's `from_pretrained` arguments, e.g.
            `{"assignment": "product", "num_tables": 32, "rows_per_table": 256}`
            (add `"token_weights": token_weights(model, texts)` to fit the
            codes to the tokens your text uses, and `"row_scales": True` for
            one byte of length per token).
        verbose: show the progress of fitting codes.
        max_sequence_length: optional; keep only this many rows of the
            position table (the length the model was trained on, when it
            carries more).

    Every weight but the token table is copied exactly; the new table starts
    from the pretrained one (see `pretrained_token_embedding`).

    Example:
    ```python
    embedder = keras_hub.models.BertTextEmbedder.from_preset(minilm_preset_dir())
    small = keras_subembed.compress(embedder, "sub", {"assignment": "product",
        "num_tables": 32, "rows_per_table": 256})       # 34x smaller table
    small.encode_text(["A sentence."]).shape
    # (1, 384)
    ```
    """
    if isinstance(model, keras_hub.models.TextEmbedder):
        return compress_text_embedder(model, embedding, embedding_kwargs, verbose=verbose,
                                      max_sequence_length=max_sequence_length)
    if isinstance(model, keras_hub.models.Backbone):
        return compress_backbone(model, embedding, embedding_kwargs, verbose=verbose,
                                 max_sequence_length=max_sequence_length)
    raise TypeError(
        "`model` must be a keras-hub TextEmbedder (e.g. BertTextEmbedder) or a text-"
        f"encoder Backbone (e.g. BertBackbone). Received: model={model!r:.80} "
        f"(a {type(model).__name__})"
    )
