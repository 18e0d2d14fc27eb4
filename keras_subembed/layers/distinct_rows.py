"""Run a per-id computation once per distinct id of a batch, with static shapes.

DeFINE and ALONE compute each token's vector by a network of the token id
alone. Run per token, a batch of 256 x 512 tokens holds that network's
activations for 131k rows (10 GB for DeFINE), though it holds at most
`input_dim` distinct ids -- and natural text far fewer. `per_distinct_id`
computes the network once per distinct id, in chunks whose activations are
recomputed in the backward pass, and gathers the rows back to the tokens.

Everything has a static size, as XLA needs (no `unique` op exists in
`keras.ops`, and `jnp.unique` needs a static size): a sort-based unique of
size `min(tokens, input_dim)`; on JAX, chunks past the batch's real number
of distinct ids are skipped by a `cond`, so the work follows that number.
"""

import keras
from keras import ops

from keras_subembed.layers.compressed_embedding import known_values


def static_size(token_ids):
    """The number of ids as a Python int, or `None` when a dimension is dynamic."""
    size = 1
    for dimension in token_ids.shape:
        if dimension is None:
            return None
        size *= int(dimension)
    return size


def distinct_ids(flat_ids, size):
    """`(distinct, index, count)` of int32 `flat_ids` (shape `(n,)`, static).

    `distinct` has `size` (>= the number of distinct ids, e.g. `min(n, V)`)
    entries: the distinct ids in increasing order, then zeros;
    `take(distinct, index) == flat_ids`; `count` is the number of distinct ids.
    A token's index is the rank of its own id among the batch's ids, so its
    row is computed from its own id only.
    """
    order = ops.argsort(flat_ids)
    ordered = ops.take(flat_ids, order)
    # True at the first of each run of equal ids in sorted order.
    first = ops.concatenate(
        [ops.ones((1,), "bool"), ops.not_equal(ordered[1:], ordered[:-1])], axis=0
    )
    rank = ops.cumsum(ops.cast(first, "int32")) - 1
    count = rank[-1] + 1
    # `order` is a permutation: scattering the ranks back inverts it. Only the
    # first of each run writes its id, so the scatter's additions are exact.
    index = ops.scatter(ops.expand_dims(order, -1), rank, ops.shape(flat_ids))
    distinct = ops.scatter(
        ops.expand_dims(rank, -1), ops.where(first, ordered, 0), (size,)
    )
    return distinct, index, count


def per_distinct_id(compute, token_ids, input_dim, width, chunk_size, dtype):
    """`compute(ids)` (int32 `(n,)` -> `(n, width)`) for every id, once per distinct id.

    `token_ids` are int32 and all in range. Returns `(..., width)` vectors
    shaped like `token_ids`, or `None` when the number of ids is not static (a dynamic batch in a
    TensorFlow graph or an exported model): the caller then computes per
    token. `compute` must treat rows independently and be deterministic
    (no dropout).
    """
    size = static_size(token_ids)
    if size is None or size == 0:
        return None
    flat_ids = ops.reshape(token_ids, (-1,))
    distinct, index, count = distinct_ids(flat_ids, min(size, input_dim))
    num_rows = distinct.shape[0]
    if keras.backend.backend() != "jax":
        # TensorFlow: one pass over the distinct ids, no chunks. (Chunks pay
        # off only with recomputation in the backward pass, which is JAX's
        # `checkpoint` here; `tf.recompute_grad` around layer calls inside
        # `map` is untried.)
        table = ops.cast(compute(distinct), dtype)
        return ops.reshape(ops.take(table, index, axis=0), (*token_ids.shape, width))
    chunk_size = min(chunk_size, num_rows)
    num_chunks = -(-num_rows // chunk_size)
    padded = num_chunks * chunk_size
    if padded > num_rows:  # id 0 fills the last chunk: valid, and no token reads it
        distinct = ops.pad(distinct, [(0, padded - num_rows)])
    chunks = ops.reshape(distinct, (num_chunks, chunk_size))
    known_count = known_values(count)
    if known_count is not None:
        # Eager JAX (any gradient would trace, so none is taken here): `ops.map` would
        # compile its body anew on every call, a new closure each time (6.5 s of a 7.7 s
        # DeFINE call). A Python loop over the chunks that hold distinct ids runs ops JAX
        # has compiled once per shape; every chunk has `chunk_size` rows.
        used = -(-int(known_count) // chunk_size)
        rows = [ops.cast(compute(chunks[i]), dtype) for i in range(used)]
        rows.append(ops.zeros(((num_chunks - used) * chunk_size, width), dtype))
        return ops.reshape(ops.take(ops.concatenate(rows, axis=0), index, axis=0),
                           (*token_ids.shape, width))
    starts = ops.arange(0, padded, chunk_size, dtype="int32")

    def rows_of_chunk(inputs):
        ids, start = inputs
        return ops.cond(
            ops.less(start, count),
            lambda: ops.cast(compute(ids), dtype),
            lambda: ops.zeros((chunk_size, width), dtype),
        )

    # Only the chunk's ids are kept for the backward pass, which recomputes
    # the chunk's activations: peak memory is one chunk's, not the batch's.
    rows_of_chunk = keras.remat(rows_of_chunk)
    table = ops.reshape(ops.map(rows_of_chunk, (chunks, starts)), (padded, width))
    vectors = ops.take(table, index, axis=0)
    return ops.reshape(vectors, (*token_ids.shape, width))


def embed_per_distinct_id(layer, vectors_of_ids, token_ids, training=None):
    """`(..., output_dim)` vectors of `layer` for in-range int32 `token_ids`.

    `vectors_of_ids(flat_ids, training=None)` maps `(n,)` ids to `(n,
    output_dim)` vectors from the id alone. It runs once per distinct id
    (`per_distinct_id`, in chunks of `layer.distinct_chunk_size`) unless
    dropout is on -- its masks differ per token -- or the number of ids is
    dynamic (TensorFlow graphs, exported models): then once per token.
    """
    if not (training and layer.dropout):
        vectors = per_distinct_id(
            vectors_of_ids,
            token_ids,
            layer.input_dim,
            layer.output_dim,
            layer.distinct_chunk_size,
            layer.compute_dtype,
        )
        if vectors is not None:
            return vectors
    # Flatten the ids (of any rank, a single id included) and restore the shape.
    vectors = vectors_of_ids(ops.reshape(token_ids, (-1,)), training=training)
    return ops.reshape(vectors, (*ops.shape(token_ids), layer.output_dim))
