"""The contract shared by the package's compressed embedding layers."""

import keras
import numpy as np
from keras import ops

from keras_subembed.layers.compression_report import CompressionReport


def check_positive_int(name, value):
    """Raise `ValueError` naming `name` unless `value` is a positive int."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(
            f"`{name}` must be a positive integer. "
            f"Received: {name}={value!r} (of type {type(value).__name__})."
        )
    return int(value)


def check_seed(seed):
    """A seed in [0, 2^32); drawn at random when `None` (record it in the config)."""
    if seed is None:
        return int(np.random.SeedSequence().entropy % 2**32)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not (
        0 <= seed < 2**32
    ):
        raise ValueError(
            f"`seed` must be an int in [0, 2**32) or None. Received: seed={seed!r}"
        )
    return int(seed)


def input_dependent_zero(hidden):
    """An int32 0 that graph compilers cannot prove is 0.

    It is 1 only when `hidden` holds a NaN (whose logits are NaN anyway).
    Adding it to an index or a cast keeps XLA and the TFLite converter from
    constant-folding weight-only computations: XLA's folding is slow, and the
    converter would store the folded result (e.g. V-sized int32 copies of
    uint8 codes, or a whole V x d table) in the `.tflite` file.
    """
    probe = ops.sum(hidden[..., 0])
    return ops.cast(ops.not_equal(probe, probe), "int32")


def known_values(tensor):
    """The values of `tensor` as NumPy when they exist now (eager), else `None`.

    Inside `tf.function`, XLA or `jax.jit` the values are unknown until the
    graph runs, so no Python-side check is possible there.
    """
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        if not tf.executing_eagerly() or not hasattr(tensor, "numpy"):
            return None
        return tensor.numpy()
    if backend == "jax":
        import jax

        try:
            return ops.convert_to_numpy(tensor)
        except jax.errors.TracerArrayConversionError:  # public, unlike jax.core.Tracer
            return None
    return ops.convert_to_numpy(tensor)


class CompressedEmbedding(keras.layers.Layer):
    """Base class: a drop-in for `keras.layers.Embedding` with tied logits.

    Subclasses implement `embed(ids)` for ids known to be in range and
    `logits(hidden)` for `call(hidden, reverse=True)`. This class handles
    everything the contract shares:

    * token ids are cast to int32 (floats are truncated, like `Embedding`);
    * **out-of-range ids** (outside `[0, input_dim)`): an eager call raises a
      `ValueError` naming them; inside a compiled graph (tf.function, XLA,
      SavedModel, TFLite), where no error can be raised, they map to an
      all-zero vector -- never to another token's vector;
    * `compute_mask` as `keras.layers.Embedding` (`mask_zero`);
    * `embedding_table()` and `compression_report()`;
    * the **inference cache**: `freeze()` (or `cached=True` in the config)
      stores the `(input_dim, output_dim)` table in a non-trainable weight
      `cached_table`, and lookups read it instead of computing vectors.
      Layers whose tied logits are `hidden @ table.T` (`tied_to_table`) read
      it for `reverse=True` too; the others keep their own `logits()`.
    """

    tied_to_table = True

    def __init__(self, input_dim, output_dim, mask_zero=False, cached=False, **kwargs):
        input_dim = check_positive_int("input_dim", input_dim)
        output_dim = check_positive_int("output_dim", output_dim)
        if not isinstance(mask_zero, bool):
            raise ValueError(
                f"`mask_zero` must be a bool. Received: mask_zero={mask_zero!r}"
            )
        if not isinstance(cached, bool):
            raise ValueError(f"`cached` must be a bool. Received: cached={cached!r}")
        super().__init__(**kwargs)
        self.input_dim = input_dim
        self.output_dim = output_dim
        self.mask_zero = mask_zero
        self.supports_masking = mask_zero
        self.cached = cached
        self.cached_table = None

    def embed(self, token_ids, training=None):
        """Vectors `(..., output_dim)` of int32 ids all in `[0, input_dim)`."""
        raise NotImplementedError(f"{type(self).__name__} must implement embed().")

    def logits(self, hidden):
        """Scores `(..., input_dim)` of hidden states against every embedding."""
        raise NotImplementedError(f"{type(self).__name__} must implement logits().")

    def build_cache(self):
        """Create the `cached_table` weight when `cached`; call at the end of build()."""
        if self.cached and self.cached_table is None:
            self.cached_table = self.add_weight(
                name="cached_table",
                shape=(self.input_dim, self.output_dim),
                initializer="zeros",
                trainable=False,
            )

    def freeze(self):
        """Store the current `(input_dim, output_dim)` table for fast inference.

        After `freeze()` lookups are a single gather from `cached_table` (and,
        where `tied_to_table`, tied logits a single matmul): the speed of a
        plain `Embedding` at its size. The layer's own weights are kept, so
        `get_config()` records `cached=True` and a saved model reloads frozen.
        Training a frozen layer does not update the cache; freeze after
        training. Returns the layer.

        Example:
        >>> layer.freeze()
        >>> layer.cached_table.shape
        (30522, 256)
        """
        if self.cached:
            return self
        table = ops.convert_to_numpy(self.embedding_table())
        self.cached = True
        # Keras locks a built layer's state; the cache is the one weight that
        # may be added afterwards (`build()` creates it when `cached=True`).
        was_locked = self._tracker.locked
        self._tracker.unlock()
        try:
            self.build_cache()
        finally:
            if was_locked:
                self._tracker.lock()
        self.cached_table.assign(table)
        return self

    def call(self, inputs, reverse=False, training=None):
        if reverse:
            if self.cached and self.tied_to_table:
                hidden = ops.convert_to_tensor(inputs, dtype=self.compute_dtype)
                table = ops.cast(self.cached_table, self.compute_dtype)
                return ops.matmul(hidden, ops.transpose(table))
            return self.logits(inputs)
        token_ids, in_range = self._checked_ids(inputs)
        if self.cached:
            vectors = ops.take(self.cached_table, token_ids, axis=0)
        else:
            vectors = self.embed(token_ids, training=training)
        vectors = ops.cast(vectors, self.compute_dtype)
        return ops.where(ops.expand_dims(in_range, axis=-1), vectors, 0)

    def _checked_ids(self, inputs):
        """int32 ids with out-of-range ones replaced by 0, and the in-range mask."""
        inputs = ops.convert_to_tensor(inputs)
        if "int" not in str(inputs.dtype):
            inputs = ops.cast(inputs, "int32")
        values = known_values(inputs)
        if values is not None:
            bad = values[(values < 0) | (values >= self.input_dim)]
            if bad.size:
                shown = np.unique(bad)[:5].tolist()
                raise ValueError(
                    f"Token ids must be in [0, input_dim={self.input_dim}) for "
                    f"layer '{self.name}'. Received out-of-range ids {shown}"
                    f"{' and more' if np.unique(bad).size > 5 else ''}."
                )
        # The range test runs on the incoming dtype, before any narrowing cast
        # could wrap a large int64 id onto a valid one.
        in_range = ops.logical_and(
            ops.greater_equal(inputs, 0), ops.less(inputs, self.input_dim)
        )
        token_ids = ops.cast(ops.where(in_range, inputs, 0), "int32")
        return token_ids, in_range

    def compute_mask(self, inputs, mask=None):
        # Hidden states passed with reverse=True are floating point: no mask.
        if not self.mask_zero or "float" in str(ops.convert_to_tensor(inputs).dtype):
            return None
        return ops.not_equal(inputs, 0)

    def compute_output_shape(self, input_shape, reverse=False):
        if reverse:
            return (*input_shape[:-1], self.input_dim)
        return (*input_shape, self.output_dim)

    def compute_output_spec(self, inputs, reverse=False):
        shape = self.compute_output_shape(inputs.shape, reverse=reverse)
        return keras.KerasTensor(shape, dtype=self.compute_dtype)

    def embedding_table(self):
        """The full `(input_dim, output_dim)` table, materialised (for analysis)."""
        return self(ops.arange(self.input_dim, dtype="int32"))

    def compression_report(self):
        """A `CompressionReport` of what this layer stores vs a dense table."""
        if not self.built:
            self.build()
        trainable = sum(int(np.prod(w.shape)) for w in self.trainable_weights)
        fixed = sum(int(np.prod(w.shape)) for w in self.non_trainable_weights)
        stored_bytes = sum(
            int(np.prod(w.shape)) * np.dtype(w.dtype).itemsize for w in self.weights
        )
        dense_params = self.input_dim * self.output_dim
        return CompressionReport(
            layer=type(self).__name__,
            input_dim=self.input_dim,
            output_dim=self.output_dim,
            trainable_params=trainable,
            non_trainable_params=fixed,
            stored_bytes=stored_bytes,
            dense_params=dense_params,
            dense_bytes=dense_params * np.dtype(self.variable_dtype).itemsize,
        )

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "input_dim": self.input_dim,
                "output_dim": self.output_dim,
                "mask_zero": self.mask_zero,
                "cached": self.cached,
            }
        )
        return config
