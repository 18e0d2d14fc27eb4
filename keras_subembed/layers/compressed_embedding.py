"""The contract shared by the package's compressed embedding layers."""

import weakref

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from keras_subembed.assignment.clustered import check_embedding_table
from keras_subembed.checks import check_bool
from keras_subembed.checks import check_id_values
from keras_subembed.checks import check_positive_int
from keras_subembed.checks import check_seed  # noqa: F401 (re-exported)
from keras_subembed.layers.compression_report import CompressionReport
from keras_subembed.optional import jax


def hide_from_constant_folding(values, hidden):
    """Integer `values` XOR-ed with a 0 that graph compilers cannot prove is 0.

    Apply it once per `logits` call to the weight-only integer tensor that
    everything constant-foldable derives from (stored codes, id ranges).
    Without it the TFLite converter folds those computations and stores their
    results (e.g. V-sized int32 copies of uint8 codes, or a whole V x d table)
    in the `.tflite` file, and XLA spends long compiles folding them.

    The 0 comes from the *size* of `hidden`, never from its values, so a NaN
    or inf in one row cannot change another row's logits: `n // (n + 1)` is 0
    for every size n >= 0, yet unknown to the compiler while the batch
    dimension is dynamic (as in every exported signature).
    """
    size = ops.cast(ops.shape(ops.reshape(hidden, (-1,)))[0], "int32")
    zero = ops.floor_divide(size, size + 1)
    return ops.bitwise_xor(values, ops.cast(zero, values.dtype))


def known_values(tensor):
    """The values of `tensor` as NumPy when they exist now (eager), else `None`.

    Inside `tf.function`, XLA or `jax.jit` the values are unknown until the
    graph runs, so no Python-side check is possible there. NumPy arrays and
    Python sequences are read as they are, before any backend conversion
    (JAX narrows int64 to int32 on conversion, wrapping large ids).
    """
    backend = keras.backend.backend()
    if backend == "tensorflow":
        if isinstance(tensor, (tf.RaggedTensor, tf.SparseTensor)):
            raise ValueError(
                "Compressed embeddings take dense token ids. Received a "
                f"{type(tensor).__name__}; pad it first (e.g. `ids.to_tensor()`)."
            )
        if tf.is_tensor(tensor):
            if not tf.executing_eagerly() or not hasattr(tensor, "numpy"):
                return None
            return tensor.numpy()
    if backend == "jax":
        try:
            return ops.convert_to_numpy(tensor)
        except jax.errors.TracerArrayConversionError:  # public, unlike jax.core.Tracer
            return None
    if isinstance(tensor, keras.KerasTensor):
        return None
    return np.asarray(ops.convert_to_numpy(tensor) if ops.is_tensor(tensor) else tensor)


def pretrained_sizes(table, kwargs):
    """`kwargs` with `input_dim` and `output_dim` set from `table`'s shape,
    refused when given and different."""
    kwargs = dict(kwargs)
    for name, size, what in (("input_dim", table.shape[0], "rows"),
                             ("output_dim", table.shape[1], "width")):
        if kwargs.setdefault(name, size) != size:
            raise ValueError(
                f"`{name}={kwargs[name]}` does not match the table's {what} ({size})."
            )
    return kwargs


# Models whose compiled steps may hold a layer that changes afterwards
# (freezing, fake quantization), held weakly: Keras keeps no list of the
# models a layer belongs to. Filled when a model calls a compressed
# embedding (it is the outermost caller), by the package's models when they
# are built, and by `fake_quantized` for the model it is given.
_MODELS_WITH_STEPS = weakref.WeakSet()
_STEPS = ("predict_function", "test_function", "train_function")


def pretrained_cache(kwargs):
    """`from_pretrained`'s `cached`, popped from `kwargs`: a layer made `cached` holds a
    cache of zeros until weights are loaded into it (what `from_config` needs), so a fitted
    layer is made uncached and frozen once its weights are set."""
    return check_bool("cached", kwargs.pop("cached", False))


def remember_model(model):
    """Let `forget_compiled_steps` drop `model`'s compiled steps (held weakly)."""
    if isinstance(model, keras.Model):
        _MODELS_WITH_STEPS.add(model)


def forget_compiled_steps(*layers):
    """Drop the compiled predict/evaluate/train steps of every remembered model
    holding one of `layers`.

    Keras traces a model's steps once and reuses them; a change that alters
    the traced graph (freezing, fake quantization) takes effect only in a
    fresh trace.
    """
    wanted = {id(layer) for layer in layers}
    for model in list(_MODELS_WITH_STEPS):
        if all(getattr(model, step, None) is None for step in _STEPS):
            continue
        if any(id(sublayer) in wanted for sublayer in model._flatten_layers()):
            for step in _STEPS:
                setattr(model, step, None)


class CompressedEmbedding(keras.layers.Layer):
    """Base class: a drop-in for `keras.layers.Embedding` with tied logits.

    Subclasses implement `build_weights()` (their own weights), `embed(ids)`
    for ids known to be in range and `logits(hidden)` for
    `call(hidden, reverse=True)`. This class owns `build()` (it calls
    `build_weights()`, then adds the cache) and everything else the contract
    shares:

    * token ids may be any integer or float dtype; a float id must be a whole
      number (60.9 is not token 60, unlike `Embedding`, which truncates);
    * **ids that are not ids** (outside `[0, input_dim)`, fractional, NaN):
      an eager call raises a `ValueError` naming them with their real
      values, checked before any narrowing cast (strings: `TypeError`);
      inside a compiled graph (tf.function, XLA, SavedModel, TFLite), where
      no error can be raised, they map to an all-zero vector -- never to
      another token's vector;
    * `compute_mask` as `keras.layers.Embedding` (`mask_zero`);
    * `embedding_table()` and `compression_report()`;
    * **freezing** (the inference cache): `freeze()`, or `cached=True` in the
      config, stores the `(input_dim, output_dim)` table in a non-trainable
      weight `cached_table`, and lookups read it instead of computing
      vectors. "Frozen" and "cached" name the same state. Layers whose tied
      logits are `hidden @ table.T` (`tied_to_table`) read it for
      `reverse=True` too; the others keep their own `logits()`.

    Capabilities, as class attributes that models and export read:

    * `tied_to_table`: tied logits equal `hidden @ embedding_table().T`.
    * `freeze_speeds_up`: a frozen layer is much faster (worth the V x d
      table it stores), so export freezes it when asked for speed.
    """

    tied_to_table = True
    freeze_speeds_up = False

    def __init__(self, input_dim, output_dim, mask_zero=False, cached=False, **kwargs):
        input_dim = check_positive_int("input_dim", input_dim)
        output_dim = check_positive_int("output_dim", output_dim)
        mask_zero = check_bool("mask_zero", mask_zero)
        cached = check_bool("cached", cached)
        super().__init__(**kwargs)
        # Keras would convert NumPy ids to tensors before `call`, narrowing
        # int64 to int32 on JAX; `call` converts them after checking them.
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        if "float" not in str(self.variable_dtype):
            raise ValueError(
                f"`dtype` of {type(self).__name__} must be a floating-point dtype "
                f"or policy (ids may be integers, the weights may not). Received: "
                f"dtype={self.dtype_policy.name!r}"
            )
        self.input_dim = input_dim
        self.output_dim = output_dim
        self.mask_zero = mask_zero
        self.supports_masking = mask_zero
        self.cached = cached
        self.cached_table = None

    @classmethod
    def from_pretrained(cls, table, verbose=False, **kwargs):
        """A layer of this kind for a pretrained `(V, d)` token table.

        Every kind has this door, so models compress a table without knowing
        the kind. Here (ALONE, and any kind with nothing to fit in closed
        form) only the sizes come from `table`; `SubEmbedding` and
        `DeFINEEmbedding` also fit their weights to it. `verbose` shows the
        progress of a fit; `kwargs` go to the constructor.

        Example:
        >>> table = np.ones((1000, 32), "float32")
        >>> layer = keras_subembed.layers.ALONEEmbedding.from_pretrained(table)
        >>> layer.input_dim, layer.output_dim
        (1000, 32)
        """
        check_bool("verbose", verbose)  # nothing is fitted here
        table = check_embedding_table(table, name="table")
        cached = pretrained_cache(kwargs)
        layer = cls(**pretrained_sizes(table, kwargs))
        return layer.freeze() if cached else layer

    def build_weights(self, input_shape=None):
        """Create the layer's own weights; `build()` adds the cache after it."""
        raise NotImplementedError(
            f"{type(self).__name__} must implement build_weights()."
        )

    def embed(self, token_ids, training=None):
        """Vectors `(..., output_dim)` of int32 ids all in `[0, input_dim)`."""
        raise NotImplementedError(f"{type(self).__name__} must implement embed().")

    def logits(self, hidden):
        """Scores `(..., input_dim)` of hidden states against every embedding."""
        raise NotImplementedError(f"{type(self).__name__} must implement logits().")

    def build(self, input_shape=None):
        if self.built:
            return
        self.build_weights(input_shape)
        self._build_cache()
        self.built = True

    def _build_cache(self):
        """Create the `cached_table` weight when `cached` and not yet created."""
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
        Models that hold the layer drop their compiled `predict`, `evaluate`
        and `fit` steps, so their next call is traced again and uses the
        cache. Training a frozen layer does not update the cache; freeze after
        training. Returns the layer.

        Example:
        >>> layer = keras_subembed.layers.ALONEEmbedding(1000, 16, seed=1)
        >>> _ = layer.freeze()
        >>> tuple(layer.cached_table.shape)
        (1000, 16)
        """
        if self.cached:
            return self
        if not self.built:
            self.build()
        table = ops.convert_to_numpy(self.embedding_table())
        self.cached = True
        # Keras locks a built layer's state; the cache is the one weight that
        # may be added afterwards (`build()` creates it when `cached=True`).
        was_locked = self._tracker.locked
        self._tracker.unlock()
        try:
            self._build_cache()
        finally:
            if was_locked:
                self._tracker.lock()
        self.cached_table.assign(table)
        forget_compiled_steps(self)
        return self

    def __call__(self, *args, **kwargs):
        # The call context's entry layer is the outermost caller: the model,
        # called eagerly or traced into a TensorFlow step. A context opened
        # here (the layer called alone) is closed here, even on an error.
        remember_model(self._get_call_context().entry_layer)
        try:
            return super().__call__(*args, **kwargs)
        finally:
            self._maybe_reset_call_context()

    def call(self, inputs, reverse=False, training=None):
        """Embed token ids, or score hidden states against every token.

        Args:
            inputs: token ids `(...)` (any integer or float dtype), or, with
                `reverse=True`, hidden states `(..., output_dim)`.
            reverse: bool. When True, return the tied logits `(...,
                input_dim)`: the score of each hidden state against every
                token's embedding, `hidden @ embedding_table().T` for layers
                whose `tied_to_table` is True. This is what
                `keras_hub.layers.MaskedLMHead(token_embedding=layer)` calls.
            training: bool. Enables dropout where the layer has any.

        Returns:
            `(..., output_dim)` vectors (all zeros for out-of-range ids in
            compiled graphs), or `(..., input_dim)` logits.
        """
        if check_bool("reverse", reverse):
            width = getattr(inputs, "shape", np.shape(inputs))[-1:]
            if width and width[0] is not None and width[0] != self.output_dim:
                raise ValueError(
                    f"`reverse=True` scores hidden states of width output_dim="
                    f"{self.output_dim} against every token of layer '{self.name}'. "
                    f"Received hidden states of shape {tuple(inputs.shape)}."
                )
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
        # Checked before any conversion: JAX narrows int64 to int32 (wrapping
        # 2**32 + 5 onto 5) and a float NaN casts to an arbitrary int.
        values = known_values(inputs)
        if values is not None:
            self._raise_if_out_of_range(values)
        inputs = ops.convert_to_tensor(inputs)
        in_range = ops.logical_and(ops.greater_equal(inputs, 0),
                                   ops.less(inputs, self.input_dim))
        if "float" in str(inputs.dtype):
            # A fractional id is no id (NaN fails this too): the zero vector.
            in_range = ops.logical_and(in_range, ops.equal(ops.floor(inputs), inputs))
        token_ids = ops.cast(ops.where(in_range, inputs, 0), "int32")
        return token_ids, in_range

    def _raise_if_out_of_range(self, values):
        values = check_id_values(f"token_ids` of layer `{self.name}", values)
        in_range = (values >= 0) & (values < self.input_dim)
        bad = np.unique(values[~in_range])
        if bad.size:
            raise ValueError(
                f"Token ids must be in [0, input_dim={self.input_dim}) for "
                f"layer '{self.name}'. Received out-of-range ids {bad[:5].tolist()}"
                f"{' and more' if bad.size > 5 else ''}."
            )

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
