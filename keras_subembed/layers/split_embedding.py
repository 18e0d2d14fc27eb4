"""Exact int8 rows for the first ids, a compressed layer for the rest."""

import keras
import numpy as np
from keras import ops

from keras_subembed.assignment.clustered import check_embedding_table
from keras_subembed.assignment.validation import check_token_weights
from keras_subembed.checks import check_positive_int
from keras_subembed.layers.compressed_embedding import CompressedEmbedding
from keras_subembed.layers.compressed_embedding import pretrained_cache
from keras_subembed.layers.compressed_embedding import pretrained_sizes
from keras_subembed.layers.sub_embedding import SubEmbedding


def int8_rows(table):
    """`(values, scales)`: each row rounded to int8 on its own symmetric grid."""
    table = np.asarray(table, dtype="float32")
    scales = np.abs(table).max(axis=1) / 127.0
    scales[scales == 0] = 1.0  # an all-zero row stays zero on any grid
    values = np.clip(np.round(table / scales[:, None]), -127, 127).astype("int8")
    return values, scales.astype("float32")


@keras.saving.register_keras_serializable(package="keras_subembed")
class SplitEmbedding(CompressedEmbedding):
    """Ids below `head_rows` read exact int8 rows; the others a compressed `tail` layer.

    SentencePiece Unigram vocabularies (XLM-R, multilingual-e5,
    paraphrase-multilingual-MiniLM) number their pieces by probability, so
    the first ids are the pieces every language uses most, and the long tail
    of a 250k-piece table is rare. Storing the head exactly (one byte per
    value and one float32 scale per row) and compressing only the tail puts
    the bytes where the text is. No index map is stored: a token's place is
    its id.

    Id `n < head_rows` gives `head_values[n] * head_scales[n]`; id
    `n >= head_rows` gives `tail(n - head_rows)`. The head is not trained
    (it is already exact); the tail trains as its own kind does. Tied logits
    (`reverse=True`) are the head's scores followed by the tail's, without
    building the tail's table.

    Args:
        input_dim: int. Vocabulary size V.
        output_dim: int. Width d of each embedding vector.
        head_rows: int. How many of the first ids get exact int8 rows
            (`0 < head_rows < input_dim`).
        tail: a compressed embedding layer of `input_dim - head_rows` ids and
            width `output_dim` (any kind: `SubEmbedding`, ...), or its
            serialized config. Defaults to a `SubEmbedding` with digit codes.
        mask_zero, cached: as for every `CompressedEmbedding`.

    Input shape: `(...)` token ids. Output shape: `(..., output_dim)`.

    Example:

    >>> table = np.random.default_rng(0).normal(size=(1000, 32)).astype("float32")
    >>> layer = SplitEmbedding.from_pretrained(table, head_rows=100,
    ...     tail_kwargs={"assignment": "product", "num_tables": 8, "rows_per_table": 16})
    >>> bool(np.allclose(layer(np.arange(100)), table[:100], atol=0.02))
    True
    >>> tuple(layer(np.array([[5, 500]])).shape)
    (1, 2, 32)
    """

    def __init__(self, input_dim, output_dim, head_rows, tail=None, mask_zero=False,
                 cached=False, **kwargs):
        super().__init__(input_dim, output_dim, mask_zero=mask_zero, cached=cached, **kwargs)
        head_rows = check_positive_int("head_rows", head_rows)
        if head_rows >= self.input_dim:
            raise ValueError(
                f"`head_rows` must be less than input_dim={self.input_dim}, so that a tail "
                f"is left to compress. Received: head_rows={head_rows}")
        self.head_rows = head_rows
        tail_dim = self.input_dim - head_rows
        if tail is None:
            tail = SubEmbedding(tail_dim, self.output_dim, name="tail")
        elif isinstance(tail, dict):
            tail = keras.saving.deserialize_keras_object(tail)
        if not isinstance(tail, CompressedEmbedding):
            raise TypeError(
                "`tail` must be a compressed embedding layer (e.g. SubEmbedding) or its "
                f"serialized config. Received: tail={tail!r:.80}")
        if (tail.input_dim, tail.output_dim) != (tail_dim, self.output_dim):
            raise ValueError(
                f"`tail` must embed the {tail_dim} ids after the head (input_dim - head_rows) "
                f"at width output_dim={self.output_dim}. Received a tail of input_dim="
                f"{tail.input_dim}, output_dim={tail.output_dim}")
        self.tail = tail
        self.head_values = None
        self.head_scales = None

    @classmethod
    def from_pretrained(cls, table, head_rows=None, tail_kwargs=None, token_weights=None,
                        verbose=False, **kwargs):
        """Rows `[0, head_rows)` of `table` rounded to int8, the rest fitted by
        `SubEmbedding.from_pretrained(table[head_rows:], **tail_kwargs)`.

        `token_weights` (one per row of `table`) weight the tail's fit, as
        for `SubEmbedding`; reserved ids are not needed when the special
        tokens are among the head's ids.
        """
        table = check_embedding_table(table, name="table")
        if head_rows is None:
            raise ValueError("`head_rows` is required: how many of the first ids get "
                             "exact int8 rows.")
        head_rows = check_positive_int("head_rows", head_rows)
        if head_rows >= table.shape[0]:
            raise ValueError(f"`head_rows` must be less than the table's {table.shape[0]} "
                             f"rows. Received: head_rows={head_rows}")
        if tail_kwargs is not None and not isinstance(tail_kwargs, dict):
            raise TypeError("`tail_kwargs` must be a dict of `SubEmbedding.from_pretrained` "
                            f"arguments. Received: tail_kwargs={tail_kwargs!r}")
        tail_kwargs = dict(tail_kwargs or {})
        if token_weights is not None and "token_weights" in tail_kwargs:
            raise ValueError(
                "Pass `token_weights` once: as `token_weights` (one per row of `table`) or in "
                "`tail_kwargs` (one per tail row), not both; one would be ignored.")
        if token_weights is not None:
            token_weights = check_token_weights(token_weights, table.shape[0], name="token_weights")
            tail_kwargs["token_weights"] = token_weights[head_rows:]
        cached = pretrained_cache(kwargs)
        tail = SubEmbedding.from_pretrained(table[head_rows:], verbose=verbose, name="tail",
                                            **tail_kwargs)
        layer = cls(head_rows=head_rows, tail=tail, **pretrained_sizes(table, kwargs))
        layer.build()
        values, scales = int8_rows(table[:head_rows])
        layer.head_values.assign(values)
        layer.head_scales.assign(scales)
        return layer.freeze() if cached else layer

    def build_weights(self, input_shape=None):
        self.head_values = self.add_weight(
            name="head_values", shape=(self.head_rows, self.output_dim), dtype="int8",
            initializer="zeros", trainable=False)
        self.head_scales = self.add_weight(
            name="head_scales", shape=(self.head_rows,), initializer="ones", trainable=False)
        self.tail.build()

    def _head_table(self):
        values = ops.cast(self.head_values, self.compute_dtype)
        return values * ops.expand_dims(ops.cast(self.head_scales, self.compute_dtype), -1)

    def embed(self, token_ids, training=None):
        in_head = ops.less(token_ids, self.head_rows)
        head_ids = ops.minimum(token_ids, self.head_rows - 1)
        head = ops.cast(ops.take(self.head_values, head_ids, axis=0), self.compute_dtype)
        head = head * ops.expand_dims(
            ops.cast(ops.take(self.head_scales, head_ids, axis=0), self.compute_dtype), -1)
        tail = self.tail.embed(ops.maximum(token_ids - self.head_rows, 0), training=training)
        return ops.where(ops.expand_dims(in_head, -1), head, ops.cast(tail, self.compute_dtype))

    def logits(self, hidden):
        hidden = ops.convert_to_tensor(hidden, dtype=self.compute_dtype)
        head = ops.matmul(hidden, ops.transpose(self._head_table()))
        return ops.concatenate([head, ops.cast(self.tail.logits(hidden), head.dtype)], axis=-1)

    def get_config(self):
        config = super().get_config()
        config.update({"head_rows": self.head_rows,
                       "tail": keras.saving.serialize_keras_object(self.tail)})
        return config
