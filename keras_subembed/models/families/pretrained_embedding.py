"""Token-embedding layers that start from a pretrained `(V, d)` token table."""

import keras
import keras_hub
import numpy as np

from keras_subembed.assignment.clustered import check_embedding_table
from keras_subembed.checks import check_bool
from keras_subembed.layers.compressed_embedding import CompressedEmbedding
from keras_subembed.layers.embedding_kinds import EMBEDDING_KINDS
from keras_subembed.layers.embedding_kinds import make_pretrained_embedding
from keras_subembed.layers.embedding_kinds import register_embedding_kind


def dense_table(embedding):
    """The `(V, d)` NumPy table of a token-embedding layer."""
    if isinstance(embedding, CompressedEmbedding):
        return np.asarray(keras.ops.convert_to_numpy(embedding.embedding_table()))
    return np.asarray(keras.ops.convert_to_numpy(embedding.embeddings))


def dense_from_pretrained(table, verbose=False, **kwargs):
    """keras-hub's `ReversibleEmbedding` (tied logits) holding `table` exactly."""
    del verbose  # nothing is fitted
    layer = keras_hub.layers.ReversibleEmbedding(*np.shape(table), **kwargs)
    layer.build((None, None))
    layer.embeddings.assign(table)
    return layer


# The dense baseline: keras-hub's tied embedding, initialised as RoBERTa's,
# and an exact copy of a pretrained table.
register_embedding_kind(
    "embedding",
    keras_hub.layers.ReversibleEmbedding,
    {"embeddings_initializer": {"class_name": "TruncatedNormal", "config": {"stddev": 0.02}}},
    from_pretrained=dense_from_pretrained,
)


def pretrained_token_embedding(
    table,
    embedding="sub",
    embedding_kwargs=None,
    name="token_embedding",
    dtype=None,
    verbose=False,
):
    """A token-embedding layer of the kind `embedding` that starts from `table`.

    A short name goes to the kind's `from_pretrained` (see
    `keras_subembed.layers.make_pretrained_embedding`) with
    `embedding_kwargs`:

    * `"sub"`: `SubEmbedding.from_pretrained` (product codes by default: one
      byte per 12 columns, e.g. `{"num_tables": 32, "rows_per_table": 256}`
      on a 384-wide table; `{"assignment": "clustered"}` for distinct codes;
      least-squares sub-tables).
    * `"embedding"`: keras-hub's `ReversibleEmbedding` equal to `table`.
    * `"define"`: `DeFINEEmbedding.from_pretrained` (a dict `map_layer` is a
      `SubEmbedding` fitted to the table's principal components).
    * `"alone"`: `ALONEEmbedding` from its own initialisation (its filters are
      random by design; nothing in it can be fitted in closed form).

    A layer instance is used as it is, after checking its sizes.

    Example:
    ```python
    layer = pretrained_token_embedding(table, "sub",
        {"num_tables": 2, "rows_per_table": 256})
    ```
    """
    table = check_embedding_table(table, name="table")
    verbose = check_bool("verbose", verbose)
    num_ids, width = table.shape
    if embedding_kwargs is not None and not isinstance(embedding_kwargs, dict):
        raise TypeError(
            "`embedding_kwargs` must be a dict of the embedding's arguments or None. "
            f"Received: embedding_kwargs={embedding_kwargs!r}"
        )
    kwargs = dict(embedding_kwargs or {})
    if isinstance(embedding, keras.layers.Layer):
        if kwargs:
            raise ValueError(
                "`embedding_kwargs` only apply when `embedding` is a short name. "
                f"Received: embedding_kwargs={kwargs!r}"
            )
        sizes = (getattr(embedding, "input_dim", None), getattr(embedding, "output_dim", None))
        if sizes != (num_ids, width):
            raise ValueError(
                f"The embedding layer maps {sizes[0]} ids to width {sizes[1]}, but the "
                f"pretrained token table is {num_ids} x {width}: the vocabulary and "
                "width must match the backbone's."
            )
        return embedding
    if not isinstance(embedding, str) or embedding not in EMBEDDING_KINDS:
        raise ValueError(
            f"`embedding` must be a layer or one of {sorted(EMBEDDING_KINDS)}. "
            f"Received: embedding={embedding!r}"
        )
    if embedding == "embedding" and kwargs:
        raise ValueError(
            '`embedding="embedding"` is an exact copy and takes no '
            f"`embedding_kwargs`. Received: {kwargs!r}"
        )
    return make_pretrained_embedding(
        embedding, table, name=name, dtype=dtype, verbose=verbose, **kwargs)
