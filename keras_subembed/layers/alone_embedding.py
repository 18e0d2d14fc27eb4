"""ALONE: all word embeddings from one trainable vector (Takase & Kobayashi, 2020)."""


import keras
from keras import ops

from keras_subembed.assignment.code_space import smallest_code_dtype
from keras_subembed.checks import check_bool
from keras_subembed.checks import check_choice
from keras_subembed.checks import check_open_probability
from keras_subembed.checks import check_positive_int
from keras_subembed.checks import check_rate
from keras_subembed.checks import check_seed
from keras_subembed.layers import random_filters
from keras_subembed.layers.compressed_embedding import CompressedEmbedding
from keras_subembed.layers.compressed_embedding import hide_from_constant_folding
from keras_subembed.layers.distinct_rows import embed_per_distinct_id

_FILTER_KINDS = ("binary", "real")


@keras.saving.register_keras_serializable(package="keras_subembed")
class ALONEEmbedding(CompressedEmbedding):
    """Every token's vector from one shared vector: `e_w = FFN(filter_w * o)`.

    `o` is a single trainable vector of width `base_dim` (D0). Token w
    multiplies it elementwise by a fixed random `filter_w`: the sum of one row
    per source matrix, drawn uniformly for w from each of `num_source_matrices`
    (M) random matrices. Each source matrix is `source_columns x base_dim`
    (c x D0): the paper calls its c rows "columns", hence the name. A two-layer FFN without
    biases (D0 -> `ffn_dim` -> `output_dim`, ReLU, dropout inside) then maps
    it to the embedding. Only `o` and the FFN are trained.

    Filters (`filter_kind`):

    * `"binary"`: source entries are Bernoulli(1 - p0^(1/M)) bits; the sum is
      clipped to [0, 1], so each filter element is 0 with probability `p0`.
      Bits are drawn at 24-bit resolution: a `p0` so close to 0 or 1 that
      every bit would be the same (all-zero or identical filters) is
      rejected, with the usable range in the error.
    * `"real"`: source entries have mean 0 and variance 1/M, so filter
      elements are approximately N(0, 1). Each entry is the centred sum of the
      4 bytes of a hash (Irwin-Hall, not Box-Muller) because only integer
      arithmetic is bit-identical in TensorFlow, XLA and TFLite.

    **Volatile filters** (`volatile=True`, default): every filter is
    recomputed inside the graph from (token id, `seed`) by a stateless int32
    hash (see `keras_subembed.layers.random_filters`). Nothing whose size
    grows with V or with c * D0 is stored: not in the layer, the `.keras`
    file or the `.tflite` file. `volatile=False` stores the source matrices
    (M x c x D0) and each token's row choices (V x M) as non-trainable
    weights instead; for the same seed both modes give bit-identical filters.

    **Tied logits** (`call(hidden, reverse=True)`) need all V embeddings,
    which ALONE must run through the FFN on every call (in chunks of
    `logits_chunk_size` ids): O(V * D0 * ffn_dim) work per call. This is the
    method's inherent price; after training, `freeze()` stores the V x d
    table so inference is a plain lookup (`freeze_speeds_up`).

    Out-of-range ids raise eagerly and give all-zero vectors in compiled
    graphs (see `CompressedEmbedding`).

    Args:
        input_dim: int. Vocabulary size V.
        output_dim: int. Width d of each embedding vector.
        base_dim: int. D0, width of the shared vector `o` and of the filters.
            Defaults to `output_dim`.
        ffn_dim: int. Hidden width of the FFN. Defaults to `2 * output_dim`.
        num_source_matrices: int. M. Defaults to 8 (as the authors).
        source_columns: int. c, the number of rows (the paper's "columns")
            of each source matrix: the choices each token draws from.
            Defaults to 64.
        filter_kind: `"binary"` or `"real"`. Defaults to `"binary"`.
        p0: float in (0, 1). Probability that a binary filter element is 0.
        dropout: float in [0, 1). Dropout on the FFN's hidden layer.
        dropout_stop_step: int or None. Switch dropout off after this many
            training calls (the authors switched it off late in training).
        volatile: bool. Regenerate filters from the seed (True) or store them.
        seed: int in [0, 2^32). The filters' seed. Drawn at random and
            recorded in the config when `None`.
        base_initializer: initializer of `o`. Defaults to the authors':
            normal with std `(D0 + ffn_dim)^-0.05` (binary) or `^-0.3` (real).
        kernel_initializer: initializer of the FFN weights (Xavier uniform).
        kernel_regularizer: regularizer of the FFN weights.
        mask_zero: bool, as in `keras.layers.Embedding`.
        cached: bool. Whether the layer is frozen: vectors come from a stored
            V x d table (see `freeze()`).
        **kwargs: `keras.layers.Layer` arguments (`name`, `dtype`, ...).

    Example:
    >>> layer = keras_subembed.layers.ALONEEmbedding(30_522, 256, seed=1)
    >>> tuple(layer(np.array([[101, 7592, 102]])).shape)
    (1, 3, 256)
    >>> layer.compression_report().trainable_params
    262400
    """

    logits_chunk_size = 8192
    # Distinct ids run through the FFN together in training (JAX); the
    # backward pass recomputes each chunk, so this bounds its memory.
    # Compiled for an H100, a 256 x 512-token train step holds 234 MiB of
    # temporaries with 1,024 (288 MiB with 4,096), at the same CPU speed
    # (benchmarks/RESULTS.md).
    distinct_chunk_size = 1024
    tied_to_table = True
    freeze_speeds_up = True

    def __init__(
        self,
        input_dim,
        output_dim,
        base_dim=None,
        ffn_dim=None,
        num_source_matrices=8,
        source_columns=64,
        filter_kind="binary",
        p0=0.5,
        dropout=0.0,
        dropout_stop_step=None,
        volatile=True,
        seed=None,
        base_initializer=None,
        kernel_initializer="glorot_uniform",
        kernel_regularizer=None,
        mask_zero=False,
        cached=False,
        **kwargs,
    ):
        super().__init__(
            input_dim, output_dim, mask_zero=mask_zero, cached=cached, **kwargs
        )
        self.base_dim = check_positive_int(
            "base_dim", self.output_dim if base_dim is None else base_dim
        )
        self.ffn_dim = check_positive_int(
            "ffn_dim", 2 * self.output_dim if ffn_dim is None else ffn_dim
        )
        self.num_source_matrices = check_positive_int(
            "num_source_matrices", num_source_matrices
        )
        self.source_columns = check_positive_int("source_columns", source_columns)
        self.filter_kind = check_choice("filter_kind", filter_kind, _FILTER_KINDS)
        self.p0 = check_open_probability("p0", p0)
        self.dropout = check_rate("dropout", dropout)
        if dropout_stop_step is not None:
            dropout_stop_step = check_positive_int("dropout_stop_step", dropout_stop_step)
        self.dropout_stop_step = dropout_stop_step
        self.volatile = check_bool("volatile", volatile)
        self.seed = check_seed(seed)
        self._threshold = random_filters.bernoulli_threshold(
            self.p0, self.num_source_matrices
        )
        if self.filter_kind == "binary":
            random_filters.check_threshold(self._threshold, self.p0, self.num_source_matrices)
        _check_filters_stay_distinct(self)
        if base_initializer is None:
            exponent = -0.05 if self.filter_kind == "binary" else -0.3
            base_initializer = keras.initializers.RandomNormal(
                stddev=float((self.base_dim + self.ffn_dim) ** exponent), seed=self.seed
            )
        self.base_initializer = keras.initializers.get(base_initializer)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)
        self._keys = random_filters.filter_keys(
            self.seed, self.num_source_matrices, self.base_dim
        )
        if self.dropout:
            self.seed_generator = keras.random.SeedGenerator(self.seed)
        self.stored_row_choices = None
        self.stored_sources = None
        self.dropout_step = None

    def build_weights(self, input_shape=None):
        self.base_vector = self.add_weight(
            name="base_vector", shape=(self.base_dim,), initializer=self.base_initializer
        )
        self.hidden_kernel = self.add_weight(
            name="hidden_kernel",
            shape=(self.base_dim, self.ffn_dim),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
        )
        self.output_kernel = self.add_weight(
            name="output_kernel",
            shape=(self.ffn_dim, self.output_dim),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
        )
        if not self.volatile:
            # The same integer-hash code as volatile mode, run once here, so
            # both modes give bit-identical filters.
            self.stored_row_choices = self._constant_weight(
                "row_choices",
                (self.input_dim, self.num_source_matrices),
                smallest_code_dtype(self.source_columns),
                lambda: self._row_choices(ops.arange(self.input_dim, dtype="int32")),
            )
            self.stored_sources = self._constant_weight(
                "source_matrices",
                (self.num_source_matrices * self.source_columns, self.base_dim),
                "uint8" if self.filter_kind == "binary" else "int16",
                lambda: self._generated_sources(
                    ops.arange(self.source_columns, dtype="int32")
                ),
            )
        if self.dropout and self.dropout_stop_step is not None:
            self.dropout_step = self.add_weight(
                name="dropout_step",
                shape=(),
                dtype="int32",
                initializer="zeros",
                trainable=False,
                aggregation="only_first_replica",
            )

    def _constant_weight(self, name, shape, dtype, compute):
        return self.add_weight(
            name=name,
            shape=shape,
            dtype=dtype,
            initializer=lambda shape, dtype=None: ops.cast(compute(), dtype),
            trainable=False,
        )

    def _row_choices(self, token_ids):
        return random_filters.row_choices(token_ids, self._keys, self.source_columns)

    def _entry_values(self, rows):
        return random_filters.entry_values(
            random_filters.source_entries(rows, self._keys),
            self.filter_kind,
            self._threshold,
        )

    def _generated_sources(self, source_rows):
        """All source entries `(M * c, D0)` as int32, matrix-major (row r of matrix i at i*c + r).

        `source_rows` is `arange(source_columns)` (int32).
        """
        every_row = ops.broadcast_to(
            ops.expand_dims(source_rows, -1),
            (self.source_columns, self.num_source_matrices),
        )
        entries = self._entry_values(every_row)
        return ops.reshape(ops.transpose(entries, (1, 0, 2)), (-1, self.base_dim))

    def _combine(self, entries):
        return random_filters.combine_entries(
            entries, self.filter_kind, self.num_source_matrices
        )

    def filters(self, token_ids):
        """The float32 filters `(..., base_dim)` of in-range int32 ids."""
        if not self.built:
            self.build()
        token_ids = ops.cast(token_ids, "int32")
        if self.volatile:
            return self._combine(self._entry_values(self._row_choices(token_ids)))
        rows = ops.cast(ops.take(self.stored_row_choices, token_ids, axis=0), "int32")
        return self._combine(self._gather_entries(rows, self.stored_sources))

    def _gather_entries(self, rows, sources):
        offsets = ops.arange(self.num_source_matrices, dtype="int32") * self.source_columns
        return ops.cast(ops.take(sources, rows + offsets, axis=0), "int32")

    def _feed_forward(self, filters, training=None):
        base = ops.cast(self.base_vector, self.compute_dtype)
        masked = ops.cast(filters, self.compute_dtype) * base
        hidden = ops.relu(ops.matmul(masked, ops.cast(self.hidden_kernel, self.compute_dtype)))
        if training and self.dropout:
            hidden = self._dropout(hidden)
        return ops.matmul(hidden, ops.cast(self.output_kernel, self.compute_dtype))

    def _dropout(self, hidden):
        rate = ops.convert_to_tensor(self.dropout, dtype=self.compute_dtype)
        if self.dropout_step is not None:
            active = ops.less(self.dropout_step, self.dropout_stop_step)
            rate = ops.where(active, rate, ops.zeros_like(rate))
            self.dropout_step.assign(self.dropout_step + 1)
        keep = ops.greater_equal(
            keras.random.uniform(ops.shape(hidden), seed=self.seed_generator), rate
        )
        return ops.where(keep, hidden / (1 - rate), ops.zeros_like(hidden))

    def embed(self, token_ids, training=None):
        return embed_per_distinct_id(self, self._vectors_of_ids, token_ids, training=training)

    def _vectors_of_ids(self, flat_ids, training=None):
        """`(n, output_dim)` vectors of `(n,)` in-range int32 ids."""
        return self._feed_forward(self.filters(flat_ids), training=training)

    def logits(self, hidden):
        hidden = ops.convert_to_tensor(hidden, dtype=self.compute_dtype)
        chunk_size = min(self.logits_chunk_size, self.input_dim)
        # Every weight-only integer below derives from this one range (ids of
        # a chunk, and the source rows), so hiding it from constant folding
        # keeps the filters of all V ids out of a .tflite file. Its static
        # size (XLA needs one) bounds the only constant it leaves.
        counting = hide_from_constant_folding(
            ops.arange(max(chunk_size, self.source_columns), dtype="int32"), hidden
        )
        if self.volatile:
            # The source entries are shared by every chunk: generate them once.
            sources = self._generated_sources(counting[: self.source_columns])
        else:
            sources = self.stored_sources
        pieces = []
        for start in range(0, self.input_dim, chunk_size):
            stop = min(start + chunk_size, self.input_dim)
            if self.volatile:
                rows = self._row_choices(counting[: stop - start] + start)
            else:
                # Stored rows are sliced from the (unfoldable) counting range.
                rows = ops.take(self.stored_row_choices, counting[: stop - start] + start, axis=0)
                rows = ops.cast(rows, "int32")
            filters = self._combine(self._gather_entries(rows, sources))
            table = self._feed_forward(filters)
            pieces.append(ops.matmul(hidden, ops.transpose(table)))
        return pieces[0] if len(pieces) == 1 else ops.concatenate(pieces, axis=-1)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "base_dim": self.base_dim,
                "ffn_dim": self.ffn_dim,
                "num_source_matrices": self.num_source_matrices,
                "source_columns": self.source_columns,
                "filter_kind": self.filter_kind,
                "p0": self.p0,
                "dropout": self.dropout,
                "dropout_stop_step": self.dropout_stop_step,
                "volatile": self.volatile,
                "seed": self.seed,
                "base_initializer": keras.initializers.serialize(self.base_initializer),
                "kernel_initializer": keras.initializers.serialize(
                    self.kernel_initializer
                ),
                "kernel_regularizer": keras.regularizers.serialize(
                    self.kernel_regularizer
                ),
            }
        )
        return config


# Refused above this expected share of ids whose filter (hence vector) equals
# another id's: such ids cannot be told apart, whatever the training. Small
# test-sized layers lose a few ids by chance; a quarter is a broken setting.
MAX_SHARED_FILTER_SHARE = 0.25


def _check_filters_stay_distinct(layer):
    """`ValueError` when the settings make many ids share one filter.

    Two ids get the same filter when they draw the same row from every source
    matrix (probability `source_columns ** -num_source_matrices`) or, for
    binary filters, when all `base_dim` bits agree (each with probability
    `p0**2 + (1 - p0)**2`). The expected share of the `input_dim` ids that
    collide with another is bounded, as measured filters confirm.
    """
    same_rows = float(layer.source_columns) ** -layer.num_source_matrices
    same_bits = 0.0
    if layer.filter_kind == "binary":
        same_bits = (layer.p0**2 + (1 - layer.p0) ** 2) ** layer.base_dim
    pair = same_rows + (1 - same_rows) * same_bits
    share = 1 - (1 - pair) ** (layer.input_dim - 1)
    if share > MAX_SHARED_FILTER_SHARE:
        raise ValueError(
            f"These ALONE settings collapse the filters: about {share:.0%} of the "
            f"{layer.input_dim} ids would share their filter (so their vector) with "
            "another id. Raise `base_dim`, keep `p0` nearer 0.5 or use more "
            "`num_source_matrices` / `source_columns`. Received: "
            f"p0={layer.p0!r}, base_dim={layer.base_dim}, "
            f"num_source_matrices={layer.num_source_matrices}, "
            f"source_columns={layer.source_columns}, filter_kind={layer.filter_kind!r}"
        )
