"""k-sub-embedding: each token is a concatenation of rows of K small tables."""

import dataclasses

import keras
import numpy as np
from keras import ops

from keras_subembed.assignment.clustered import check_embedding_table
from keras_subembed.assignment.code_space import check_rows_limit
from keras_subembed.assignment.code_space import check_rows_per_table
from keras_subembed.assignment.code_space import decode_slots
from keras_subembed.assignment.code_space import smallest_code_dtype
from keras_subembed.assignment.packing import bits_per_code
from keras_subembed.assignment.packing import pack_codes
from keras_subembed.assignment.packing import packed_width
from keras_subembed.assignment.product import shared_code_tokens
from keras_subembed.assignment.product import sub_widths
from keras_subembed.assignment.reconstruction import least_squares_sub_tables
from keras_subembed.assignment.rotation import product_rotation
from keras_subembed.assignment.registry import FIT_KEYWORDS
from keras_subembed.assignment.registry import fit_codes
from keras_subembed.assignment.registry import get_assignment
from keras_subembed.assignment.scale_levels import SCALE_LEVELS
from keras_subembed.assignment.scale_levels import norm_scale_levels
from keras_subembed.assignment.validation import check_codes
from keras_subembed.assignment.validation import check_reserved_codes
from keras_subembed.assignment.validation import check_reserved_ids
from keras_subembed.assignment.validation import check_token_weights
from keras_subembed.checks import check_bool
from keras_subembed.checks import check_positive_int
from keras_subembed.checks import check_seed
from keras_subembed.layers.compressed_embedding import CompressedEmbedding
from keras_subembed.layers.compressed_embedding import hide_from_constant_folding
from keras_subembed.layers.compressed_embedding import pretrained_cache
from keras_subembed.layers.compressed_embedding import pretrained_sizes
from keras_subembed.layers.gather_layout import column_gathers_are_fast
from keras_subembed.layers.gather_layout import side_by_side

_DEFAULT_NUM_TABLES = 3


@keras.saving.register_keras_serializable(package="keras_subembed")
class SubEmbedding(CompressedEmbedding):
    """Embedding built as the Cartesian product of `num_tables` small tables.

    Token `n` is the concatenation of `num_tables` (K) sub-vectors; sub-vector
    k is row `code[n, k]` of table k, which has `rows_per_table` (M) rows and
    about `output_dim / K` columns (widths differ by at most 1; the first
    `output_dim % K` tables are one wider). Only `M * output_dim` parameters are
    trained, instead of `input_dim * output_dim`.

    Codes come from `assignment`:

    * `"digits"` (Algorithm 1 of the paper): code k of id n is
      `floor(n / M^k) mod M`, computed inside the graph; nothing of size
      `input_dim` is stored.
    * `"random"`: a seeded random injection onto distinct code tuples.
    * any other registered assignment that reads no table
      (`keras_subembed.assignment.register_assignment`); those that fit a
      pretrained table (`"product"`, `"clustered"`) go through
      `from_pretrained`.
    * an integer array of shape `(input_dim, K)`.

    Random and explicit codes are kept in a non-trainable weight `codes` of the
    smallest integer dtype that holds them (uint8 for M <= 256), saved with
    the model. With M <= 16 (`pack_codes`), several codes share a byte: two
    for M <= 16, four for M <= 4, eight for M <= 2; they are unpacked in the
    graph with floor division and remainder (TFLite builtins). Like `keras.layers.Embedding`'s weights, explicit codes are
    not part of `get_config()` (it records `assignment="explicit"`): they come
    back with the saved weights.

    **Row scales.** With `row_scales=True` every token's vector is also
    multiplied by one of 256 trainable scale levels, picked per token by a
    stored one-byte code (`scale_codes`, `(V,)` uint8, and `scale_levels`,
    `(256,)`): a token's own length at one byte per token. `from_pretrained`
    sets each level so the rebuilt row has the pretrained row's norm (as
    model2vec keeps each token's norm; its effect on MiniLM is in
    benchmarks/RESULTS.md). Needs stored codes (not `"digits"`).

    **Rotation.** With `rotation=True` the sub-vectors side by side are multiplied by a
    stored `(d, d)` matrix (`rotation`, non-trainable, the identity until set):
    `from_pretrained` fits product codes to a rotation of the pretrained table's columns
    (`keras_subembed.assignment.product_rotation`, optimized product quantization) and
    stores the rotation back, so the same bytes of codes rebuild the table better, for
    `d * d` more stored floats (int8 in an int4 `.tflite` file).

    **Reserved ids.** The j-th id of `reserved_ids` (pad, cls, sep, mask...)
    gets code `(j, j, ..., j)`, and rows `0 .. R-1` of table 0 are used by no
    other token, so a special token never shares its table-0 sub-vector with
    an ordinary token. Ordinary ids then fill the codes whose table-0 row is
    in `[R, M)`, in order of id (digits) or at random. For explicit codes the
    same property is checked: each reserved id must own, in some table, a row
    that no ordinary id uses.

    `call(hidden, reverse=True)` returns tied logits `hidden @ table.T`
    without building the `input_dim x output_dim` table: each width-chunk
    of `hidden` is scored against its M rows and the K score vectors are
    combined by code (by broadcasting for digits, by gathering otherwise). It
    therefore plugs into `keras_hub.layers.MaskedLMHead(token_embedding=...)`.

    Out-of-range ids raise eagerly and give all-zero vectors in compiled
    graphs (see `CompressedEmbedding`).

    Args:
        input_dim: int. Vocabulary size V.
        output_dim: int. Width d of each embedding vector.
        num_tables: int. K, the number of sub-tables. Defaults to 3, or to the
            width of explicit codes.
        rows_per_table: int. M, rows in each sub-table. Defaults to the
            smallest M that gives every id a distinct code (for explicit
            codes: their maximum + 1).
        assignment: the name of a registered assignment that reads no
            table (`"digits"`, the default; `"random"`), or an int array
            `(V, K)`. `"explicit"` (with `num_tables` and `rows_per_table`)
            makes a layer whose codes are loaded afterwards with the saved
            weights, as `from_config` does.
        seed: int. Seed of a stored assignment (`"random"`). Drawn at random
            and recorded in the config when `None`.
        reserved_ids: sequence of token ids that get reserved codes.
        distinct_codes: bool. Whether explicit codes must give every id its
            own code tuple (checked; Algorithm 1 and 2 codes do). Product codes
            of a pretrained table may share tuples: pass False for them.
        pack_codes: bool or None. Store stored codes several to a byte
            (needs `rows_per_table <= 16`). `None` packs whenever M <= 16.
        rotation: bool. Multiply each vector by a stored `(d, d)` matrix (see above).
        row_scales: bool. Scale each token's vector by one of 256 trainable
            levels chosen by a stored one-byte code per token (see above).
        embeddings_initializer: initializer of the sub-tables.
        embeddings_regularizer: regularizer applied to each sub-table.
        embeddings_constraint: constraint applied to each sub-table.
        mask_zero: bool. Whether id 0 is padding to be masked, as in
            `keras.layers.Embedding`.
        **kwargs: `keras.layers.Layer` arguments (`name`, `dtype`, ...).

    Example:
    >>> layer = keras_subembed.layers.SubEmbedding(50_265, 512, num_tables=3)
    >>> tuple(layer(np.array([[0, 7, 50_264]])).shape)
    (1, 3, 512)
    >>> layer.rows_per_table, layer.compression_report().trainable_params
    (37, 18944)
    >>> tuple(layer(np.ones((2, 512), "float32"), reverse=True).shape)
    (2, 50265)
    """

    def __init__(
        self,
        input_dim,
        output_dim,
        num_tables=None,
        rows_per_table=None,
        assignment="digits",
        seed=None,
        reserved_ids=(),
        distinct_codes=True,
        pack_codes=None,
        row_scales=False,
        rotation=False,
        embeddings_initializer="uniform",
        embeddings_regularizer=None,
        embeddings_constraint=None,
        mask_zero=False,
        cached=False,
        **kwargs,
    ):
        super().__init__(
            input_dim, output_dim, mask_zero=mask_zero, cached=cached, **kwargs
        )
        self.reserved_ids = check_reserved_ids(reserved_ids, self.input_dim)
        self.distinct_codes = check_bool("distinct_codes", distinct_codes)
        explicit_codes = registered = None
        if isinstance(assignment, str):
            if assignment != "explicit":
                registered = get_assignment(assignment)
                if registered.reads_table:
                    raise ValueError(
                        f"`assignment={assignment!r}` fits codes to a pretrained table: "
                        f"use `SubEmbedding.from_pretrained(table, assignment={assignment!r})`"
                        ", or pass the codes array."
                    )
            elif num_tables is None or rows_per_table is None:
                raise ValueError(
                    '`assignment="explicit"` (codes loaded later with the saved '
                    "weights) needs `num_tables` and `rows_per_table`. Pass the "
                    "codes array as `assignment` to give them now."
                )
        else:
            explicit_codes = check_codes(
                assignment, num_ids=self.input_dim, distinct=self.distinct_codes
            )
            if num_tables is None:
                num_tables = explicit_codes.shape[1]
        if num_tables is None:
            num_tables = _DEFAULT_NUM_TABLES
        self.num_tables = check_positive_int("num_tables", num_tables)
        if self.num_tables > self.output_dim:
            raise ValueError(
                "`num_tables` cannot exceed `output_dim` (each table needs at "
                f"least one column). Received: num_tables={num_tables}, "
                f"output_dim={output_dim}"
            )
        self.rows_per_table = self._resolve_rows_per_table(
            rows_per_table, assignment, explicit_codes
        )
        if seed is not None or (registered is not None and registered.stored):
            seed = check_seed(seed)
        self.seed = seed
        # Named codes are fitted here, explicit ones given; digits are computed.
        self.assignment = "explicit" if explicit_codes is not None else assignment
        if registered is not None and registered.stored:
            explicit_codes = fit_codes(
                assignment, self.input_dim, self.num_tables, self.rows_per_table,
                reserved_ids=self.reserved_ids, seed=self.seed,
                distinct_codes=self.distinct_codes)
        self._initial_codes = None
        if explicit_codes is not None:
            self._initial_codes = check_codes(
                explicit_codes,
                self.rows_per_table,
                self.input_dim,
                self.num_tables,
                distinct=self.distinct_codes,
            )
            check_reserved_codes(self._initial_codes, self.reserved_ids)
        self.pack_codes = self._resolve_pack_codes(pack_codes)
        self.row_scales = check_bool("row_scales", row_scales)
        if self.row_scales and self.assignment == "digits":
            raise ValueError(
                '`row_scales=True` needs stored codes; assignment="digits" computes '
                "them. Use random or explicit (e.g. product) codes, or "
                "row_scales=False."
            )
        self.rotation = check_bool("rotation", rotation)
        # True until explicit codes given as "explicit" come from saved weights.
        self._codes_pending = explicit_codes is None and self.assignment == "explicit"
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)
        self.embeddings_regularizer = keras.regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = keras.constraints.get(embeddings_constraint)
        self.codes = None  # the stored-codes weight, created in build()
        self.scale_codes = self.scale_levels = None  # with row_scales, in build()
        self.rotation_matrix = None  # with rotation, in build()

    @classmethod
    def from_pretrained(
        cls,
        table,
        num_tables=None,
        rows_per_table=None,
        assignment="product",
        token_weights=None,
        reserved_ids=(),
        seed=0,
        distinct_codes=None,
        row_scales=False,
        rotation=False,
        verbose=False,
        assignment_options=None,
        **kwargs,
    ):
        """A `SubEmbedding` compressing a pretrained `(V, d)` table.

        Codes come from `assignment`, a registered name
        (`keras_subembed.assignment.ASSIGNMENTS`) or a code array:

        * `"product"` (the default: the most quality per byte measured on a
          pretrained table): k-means in each of the K sub-spaces independently
          (`keras_subembed.assignment.product_codes`). `rows_per_table`
          defaults to 256 (one byte per code) and `num_tables` to one code
          per 12 columns (32 on a 384-wide table: about 34x smaller for a
          30k vocabulary). Tokens may share a code tuple unless
          `distinct_codes=True`; the compression report counts them.
        * `"clustered"`: Algorithm 2, recursive k-means with distinct codes
          (`keras_subembed.assignment.clustered_codes`), what training from
          scratch and tied MLM logits need;
        * `"digits"`, `"random"`, any other registered name, or an explicit
          code array.

        Then every sub-table row is set to its least-squares fit to the
        pretrained vectors that use it (the mean of the matching column
        chunk of its members), so the layer starts as close to `table` as
        the structure allows; reserved ids keep their exact rows under
        product codes. Compare with
        `keras_subembed.assignment.reconstruction_quality(table,
        layer.embedding_table())`.

        Args:
            table: float array `(V, d)`, the pretrained token table.
            num_tables: int. K. Defaults to the assignment's default (product
                codes: one per 12 columns), else 3.
            rows_per_table: int. M. Defaults to the assignment's default
                (product codes: 256), else the smallest M that gives every id
                its own code tuple.
            assignment: str or int array `(V, K)`. Defaults to `"product"`.
            token_weights: optional non-negative `(V,)` weights (e.g.
                `keras_subembed.models.token_weights(model, texts)`): the fit
                cares most about the tokens real text uses (product codes
                cluster with them; every assignment's sub-tables are their
                weighted least-squares fit).
            reserved_ids: ids (pad, cls, ...) that get codes of their own.
            seed: int. Defaults to 0.
            distinct_codes: bool. Whether every id must get its own code
                tuple. Defaults to the assignment's (False for product codes).
            row_scales: bool. One byte of length per token (see the class).
            rotation: bool. Fit product codes to a learned rotation of `table`'s columns
                and store it (see the class); needs `assignment="product"`.
            verbose: bool. Show the progress of fitting codes.
            assignment_options: optional dict of the assignment's own options
                (e.g. `{"balanced": False}` for clustered codes).
            **kwargs: other `SubEmbedding` arguments (`name`, `dtype`, ...).

        Example:
        >>> table = np.random.default_rng(0).normal(size=(1000, 32))
        >>> layer = keras_subembed.layers.SubEmbedding.from_pretrained(
        ...     table, num_tables=8, assignment="product", rows_per_table=16)
        >>> tuple(layer.embedding_table().shape), layer.pack_codes
        ((1000, 32), True)
        """
        table = check_embedding_table(table, name="table")
        cached = pretrained_cache(kwargs)
        kwargs = pretrained_sizes(table, kwargs)
        verbose = check_bool("verbose", verbose)
        if token_weights is not None:
            token_weights = check_token_weights(token_weights, table.shape[0], "token_weights")
        named = assignment if isinstance(assignment, str) and assignment != "explicit" else None
        # What the codes and sub-tables rebuild: `table`, or its rotation.
        target, rotation_matrix = table, None
        rotation = check_bool("rotation", rotation)
        if rotation and named != "product":
            raise ValueError(
                "`rotation=True` fits a rotation for product codes: pass "
                f'assignment="product". Received: assignment={assignment!r:.100}')
        if assignment_options is not None and not isinstance(assignment_options, dict):
            raise TypeError(
                "`assignment_options` must be a dict of the assignment's own options (e.g. "
                f"{{'iterations': 10}}). Received: assignment_options={assignment_options!r}")
        shared = sorted(set(assignment_options or {}) & set(FIT_KEYWORDS))
        if shared:
            raise ValueError(
                f"`assignment_options` holds {', '.join(map(repr, shared))}, an argument of "
                f"`from_pretrained` itself: pass it as such (e.g. {shared[0]}=...). "
                f"Received: assignment_options={assignment_options!r}")
        if named is None and assignment_options:
            raise ValueError(
                "`assignment_options` go to a named assignment; codes given as an array "
                f"take none. Received: assignment_options={assignment_options!r}")
        if named is not None:
            registered = get_assignment(named)
            if distinct_codes is None:
                distinct_codes = registered.distinct_codes
            if num_tables is None and registered.num_tables is not None:
                num_tables = registered.num_tables(table.shape[1])
            if rows_per_table is None:
                rows_per_table = registered.rows_per_table
            if registered.reads_table:
                num_tables = _DEFAULT_NUM_TABLES if num_tables is None else num_tables
                if rotation:
                    rotation_matrix = product_rotation(table, num_tables, rows_per_table,
                                                       token_weights, reserved_ids, seed)
                    target = table @ rotation_matrix
                assignment = fit_codes(
                    named, target, num_tables,
                    rows_per_table or check_rows_per_table(
                        None, table.shape[0], num_tables, len(tuple(reserved_ids))),
                    token_weights=token_weights, reserved_ids=reserved_ids, seed=seed,
                    distinct_codes=distinct_codes, verbose=verbose, **(assignment_options or {}))
        layer = cls(
            num_tables=num_tables,
            rows_per_table=rows_per_table,
            assignment=assignment,
            seed=seed,
            reserved_ids=reserved_ids,
            distinct_codes=True if distinct_codes is None else distinct_codes,
            row_scales=row_scales,
            rotation=rotation,
            **kwargs,
        )
        layer.build()
        fitted = least_squares_sub_tables(
            target, layer.code_array(), layer.rows_per_table, layer.sub_widths, token_weights
        )
        for variable, value in zip(layer.sub_tables, fitted):
            variable.assign(value)
        if rotation_matrix is not None:
            layer.rotation_matrix.assign(rotation_matrix.T)
        if layer.row_scales:
            rebuilt = ops.convert_to_numpy(layer.embedding_table())
            levels, scale_codes = norm_scale_levels(
                table, rebuilt, layer.reserved_ids, token_weights, seed
            )
            layer.scale_levels.assign(levels)
            layer.scale_codes.assign(scale_codes)
        return layer.freeze() if cached else layer

    def _resolve_rows_per_table(self, rows_per_table, assignment, explicit_codes):
        if explicit_codes is None:
            if isinstance(assignment, str) and assignment == "explicit":
                return check_rows_limit(check_positive_int("rows_per_table", rows_per_table))
            return check_rows_per_table(
                rows_per_table, self.input_dim, self.num_tables, len(self.reserved_ids)
            )
        if rows_per_table is not None:
            return check_rows_limit(check_positive_int("rows_per_table", rows_per_table))
        largest = int(explicit_codes.max())
        # Each table uses at most input_dim distinct rows, so larger codes only
        # waste (possibly unallocatable) memory; they need renumbering.
        if largest >= max(self.input_dim, len(self.reserved_ids) + 1):
            raise ValueError(
                f"The codes in `assignment` go up to {largest}: the sub-tables "
                f"would need {largest + 1} rows, more than the input_dim="
                f"{self.input_dim} ids can use. Renumber the codes of each table "
                "densely, or pass `rows_per_table` explicitly."
            )
        return largest + 1

    def _resolve_pack_codes(self, pack_codes):
        stored = self.assignment != "digits"
        packable = bits_per_code(self.rows_per_table) is not None
        if pack_codes is None:
            return stored and packable
        pack_codes = check_bool("pack_codes", pack_codes)
        if pack_codes and not stored:
            raise ValueError(
                '`pack_codes=True` needs stored codes; assignment="digits" computes '
                "its codes in the graph and stores none."
            )
        if pack_codes and not packable:
            raise ValueError(
                "`pack_codes=True` stores several codes per byte, which needs "
                f"rows_per_table <= 16. Received: rows_per_table={self.rows_per_table}"
            )
        return pack_codes

    @property
    def sub_widths(self):
        """Column count of each sub-table; they differ by at most 1."""
        return sub_widths(self.output_dim, self.num_tables)

    def build_weights(self, input_shape=None):
        self.sub_tables = [
            self.add_weight(
                name=f"sub_table_{k}",
                shape=(self.rows_per_table, width),
                initializer=self.embeddings_initializer,
                regularizer=self.embeddings_regularizer,
                constraint=self.embeddings_constraint,
                trainable=True,
            )
            for k, width in enumerate(self.sub_widths)
        ]
        if self.rotation:
            self.rotation_matrix = self.add_weight(
                name="rotation", shape=(self.output_dim, self.output_dim),
                initializer="identity", trainable=False)
        if self.assignment == "digits":
            return
        initial_codes = self._initial_codes
        if self.pack_codes:
            shape = (self.input_dim, packed_width(self.num_tables, self.rows_per_table))
            if initial_codes is not None:
                initial_codes = pack_codes(initial_codes, self.rows_per_table)
        else:
            shape = (self.input_dim, self.num_tables)

        def codes_initializer(shape, dtype=None):
            if initial_codes is None:  # loaded afterwards with the saved weights
                return ops.zeros(shape, dtype=dtype)
            return ops.convert_to_tensor(initial_codes, dtype=dtype)

        # Packed: (V, bytes per token) uint8; else (V, K) of the smallest dtype.
        self.codes = self.add_weight(
            name="codes",
            shape=shape,
            dtype=smallest_code_dtype(self.rows_per_table),
            initializer=codes_initializer,
            trainable=False,
        )
        if self.row_scales:
            # Every token starts on level 0, 1.0: the layer without scales.
            self.scale_levels = self.add_weight(
                name="scale_levels", shape=(SCALE_LEVELS,), initializer="ones", trainable=True
            )
            self.scale_codes = self.add_weight(
                name="scale_codes",
                shape=(self.input_dim,),
                dtype="uint8",
                initializer="zeros",
                trainable=False,
            )

    def token_scales(self, token_ids):
        """Each in-range id's scale `(...)`, or `None` without `row_scales`."""
        if not self.row_scales:
            return None
        levels = ops.cast(ops.take(self.scale_codes, token_ids, axis=0), "int32")
        return ops.cast(ops.take(self.scale_levels, levels, axis=0), self.compute_dtype)

    def load_own_variables(self, store):
        super().load_own_variables(store)
        self._codes_pending = False

    def set_weights(self, weights):
        super().set_weights(weights)
        self._codes_pending = False

    def _stored_codes(self):
        if self._codes_pending:
            raise ValueError(
                f"Layer '{self.name}' has assignment='explicit' but its codes were "
                "never loaded: a config does not hold them. Load the saved model "
                "or weights (`keras.saving.load_model`, `model.load_weights`, or "
                "this layer's own `set_weights`: a model's `set_weights` assigns "
                "the variables without telling the layer), or pass the codes "
                "array as `assignment`."
            )
        return self.codes

    def token_codes(self, token_ids):
        """The K code columns (int32 tensors shaped like `token_ids`) of in-range ids."""
        if not self.built:
            self.build()
        if self.codes is not None:
            rows = ops.take(self._stored_codes(), token_ids, axis=0)
            return self._code_columns(rows)
        return self._digit_codes(ops.convert_to_tensor(token_ids, dtype="int32"))

    def _code_columns(self, stored_rows):
        """The K int32 code columns of rows `(..., stored width)` of the `codes` weight."""
        stored_rows = ops.cast(stored_rows, "int32")
        if not self.pack_codes:
            return ops.unstack(stored_rows, self.num_tables, axis=-1)
        bits = bits_per_code(self.rows_per_table)
        per_byte = 8 // bits
        packed = ops.unstack(stored_rows, stored_rows.shape[-1], axis=-1)
        return [
            ops.mod(ops.floor_divide(packed[k // per_byte], 2 ** (bits * (k % per_byte))), 2**bits)
            for k in range(self.num_tables)
        ]

    def _digit_codes(self, token_ids):
        num_reserved = len(self.reserved_ids)
        if not num_reserved:
            return decode_slots(token_ids, self.rows_per_table, self.num_tables)
        # Ordinary ids are numbered by rank: their id minus the reserved ids below.
        reserved = ops.convert_to_tensor(self.reserved_ids, dtype="int32")
        matches = ops.equal(ops.expand_dims(token_ids, axis=-1), reserved)
        is_reserved = ops.any(matches, axis=-1)
        reserved_slot = ops.sum(
            ops.cast(matches, "int32") * ops.arange(num_reserved, dtype="int32"),
            axis=-1,
        )
        reserved_before = ops.sum(
            ops.cast(ops.greater(ops.expand_dims(token_ids, -1), reserved), "int32"),
            axis=-1,
        )
        codes = decode_slots(
            token_ids - reserved_before, self.rows_per_table, self.num_tables, num_reserved
        )
        return [ops.where(is_reserved, reserved_slot, code) for code in codes]

    def embed(self, token_ids, training=None):
        codes = self.token_codes(token_ids)
        parts = [
            ops.take(table, column, axis=0) for table, column in zip(self.sub_tables, codes)
        ]
        vectors = side_by_side(parts)
        if self.rotation:
            vectors = ops.matmul(vectors, self.rotation_matrix)
        scales = self.token_scales(token_ids)
        return vectors if scales is None else vectors * ops.expand_dims(scales, -1)

    def sub_scores(self, hidden):
        """Scores `(..., M)` of each width-chunk of `hidden` against its table."""
        split_points = np.cumsum(self.sub_widths)[:-1].tolist()
        chunks = ops.split(hidden, split_points, axis=-1) if split_points else [hidden]
        return [
            ops.matmul(chunk, ops.transpose(table))
            for chunk, table in zip(chunks, self.sub_tables)
        ]

    def logits(self, hidden):
        hidden = ops.convert_to_tensor(hidden, dtype=self.compute_dtype)
        leading_shape = ops.shape(hidden)[:-1]
        flat = ops.reshape(hidden, (-1, self.output_dim))
        if self.rotation:  # hidden . (v @ U) = (hidden @ U^T) . v
            flat = ops.matmul(flat, ops.transpose(self.rotation_matrix))
        scores = self.sub_scores(flat)
        if self.codes is None:
            flat_logits = self._digit_logits(scores)
        else:
            # Unfoldable, the int32 copy of the codes is computed at run time
            # instead of stored in a .tflite file at 4x the codes' size.
            stored = hide_from_constant_folding(self._stored_codes(), flat)
            codes = ops.stack(self._code_columns(stored), axis=1)
            flat_logits = self._gathered_logits(scores, codes)
            if self.row_scales:
                flat_logits = flat_logits * self.token_scales(
                    ops.arange(self.input_dim, dtype="int32")
                )
        return ops.reshape(flat_logits, (*leading_shape, self.input_dim))

    def _gathered_logits(self, scores, codes):
        codes = ops.cast(codes, "int32")
        code_columns = ops.unstack(codes, self.num_tables, axis=1)
        # Measured on a 2-core CPU (benchmarks/history/2026-results-diary.md, P=2,048, V=50,265):
        # under XLA, gathering along the last axis of each (N, M) score
        # matrix is fused with the sum into one pass that writes the (N, V)
        # output once, 1.7-7x faster than gathering rows of the transposed
        # scores and transposing the (V, N) sum back; TensorFlow's own kernels
        # (graph mode, eager, TFLite) are 2.7-5.6x faster with the row copies.
        # On a GPU the column layout is the one that writes the output once.
        along_columns = column_gathers_are_fast()
        total = None
        for score, column in zip(scores, code_columns):
            if along_columns:
                gathered = ops.take(score, column, axis=-1)
            else:
                gathered = ops.take(ops.transpose(score), column, axis=0)
            total = gathered if total is None else total + gathered
        return total if along_columns else ops.transpose(total)

    def _digit_logits(self, scores):
        num_reserved = len(self.reserved_ids)
        if self.input_dim == num_reserved:
            ordinary = None  # every id is reserved: no outer sum to build
        else:
            ordinary = self._ordinary_digit_logits(scores)
        if not num_reserved:
            return ordinary
        reserved_logits = sum(score[:, :num_reserved] for score in scores)
        # Interleave: ordinary logits in rank order, each reserved id at its place.
        # Empty slices are skipped (TFLite reads an empty `x[:, 0:0]` as `x`).
        pieces, start = [], 0
        for position, token in enumerate(sorted(self.reserved_ids)):
            slot = self.reserved_ids.index(token)
            end = token - position
            if end > start:
                pieces.append(ordinary[:, start:end])
            pieces.append(reserved_logits[:, slot : slot + 1])
            start = end
        if start < self.input_dim - num_reserved:
            pieces.append(ordinary[:, start:])
        return ops.concatenate(pieces, axis=-1)

    def _ordinary_digit_logits(self, scores):
        # Digit codes enumerate the code space in order, so the logits of all
        # ordinary slots are an outer sum of the K score vectors, flattened.
        num_reserved = len(self.reserved_ids)
        num_rows = self.rows_per_table
        num_ordinary = self.input_dim - num_reserved
        outer = scores[-1]
        if self.num_tables > 1:
            # Only the leading digits that some ordinary id uses: when M^K is
            # much larger than V (a generous M), the outer sum would otherwise
            # build M^K columns to keep V of them.
            stride = (num_rows - num_reserved) * num_rows ** (self.num_tables - 2)
            needed = min(num_rows, -(-num_ordinary // stride))
            if needed < num_rows:
                outer = outer[:, :needed]
        width = outer.shape[-1]
        for table in range(self.num_tables - 2, -1, -1):
            score = scores[table]
            if table == 0 and num_reserved:
                score = score[:, num_reserved:]
            table_rows = num_rows - num_reserved if table == 0 else num_rows
            outer = ops.reshape(
                ops.expand_dims(outer, -1) + ops.expand_dims(score, -2),
                (-1, width * table_rows),
            )
            width *= table_rows
        if self.num_tables == 1 and num_reserved:
            outer = outer[:, num_reserved:]
        return outer[:, :num_ordinary]

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_tables": self.num_tables,
                "rows_per_table": self.rows_per_table,
                # Explicit codes are weights (the `codes` variable), not config;
                # the shape is (input_dim, num_tables).
                "assignment": self.assignment,
                "seed": self.seed,
                "reserved_ids": list(self.reserved_ids),
                "distinct_codes": self.distinct_codes,
                "pack_codes": self.pack_codes,
                "row_scales": self.row_scales,
                "rotation": self.rotation,
                "embeddings_initializer": keras.initializers.serialize(
                    self.embeddings_initializer
                ),
                "embeddings_regularizer": keras.regularizers.serialize(
                    self.embeddings_regularizer
                ),
                "embeddings_constraint": keras.constraints.serialize(
                    self.embeddings_constraint
                ),
            }
        )
        return config

    @classmethod
    def from_config(cls, config):
        # Files saved before packing existed hold unpacked (V, K) codes.
        return cls(**{"pack_codes": False, **config})

    def compression_report(self):
        """The size report, with how many ids share their code tuple with another."""
        report = super().compression_report()
        if self.codes is None:
            return dataclasses.replace(report, shared_code_tokens=0)
        if self._codes_pending:  # sizes are known, the codes not yet
            return report
        return dataclasses.replace(report, shared_code_tokens=shared_code_tokens(self.code_array()))

    def code_array(self):
        """Every id's code tuple as a NumPy int32 array `(input_dim, num_tables)`.

        Unpacked whatever the storage (the `codes` weight holds packed bytes
        when `pack_codes`), and computed for digits.

        Example:
        >>> layer = keras_subembed.layers.SubEmbedding(100, 8, num_tables=2)
        >>> layer.code_array()[13].tolist()
        [3, 1]
        """
        columns = self.token_codes(np.arange(self.input_dim, dtype="int32"))
        return np.stack([ops.convert_to_numpy(column) for column in columns], axis=1)
