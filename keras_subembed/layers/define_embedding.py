"""DeFINE: deep factorized input token embeddings (Mehta et al., ICLR 2020)."""

import math

import keras
import numpy as np
from keras import ops

from keras_subembed.assignment.clustered import check_embedding_table
from keras_subembed.checks import check_bool
from keras_subembed.checks import check_choice
from keras_subembed.checks import check_positive_int
from keras_subembed.checks import check_rate
from keras_subembed.layers.compressed_embedding import CompressedEmbedding
from keras_subembed.layers.distinct_rows import embed_per_distinct_id
from keras_subembed.layers.group_linear import GroupLinear
from keras_subembed.layers.sub_embedding import SubEmbedding


def hgt_groups(depth, max_groups, schedule="hierarchical"):
    """Groups per layer.

    `"hierarchical"` (HGT): g_max halved each layer, at least 1, the last
    layer 1. `"fixed"` (GLT, the paper's ablation): g_max in every layer.
    """
    if schedule == "fixed":
        return [max_groups] * depth
    groups = [max(max_groups // 2**layer, 1) for layer in range(depth)]
    groups[-1] = 1
    return groups


def hgt_widths(map_dim, expand_dim, groups):
    """Output widths spaced linearly from `map_dim` to `expand_dim`.

    Each width is rounded to a multiple of its own group count and of the
    next layer's (whose mixer splits it into that many chunks); the last is
    `expand_dim` itself.
    """
    depth = len(groups)
    widths = []
    for layer in range(depth):
        if layer == depth - 1:
            widths.append(expand_dim)
            continue
        multiple = math.lcm(groups[layer], groups[layer + 1])
        target = map_dim + (expand_dim - map_dim) * (layer + 1) / depth
        widths.append(max(multiple, int(round(target / multiple)) * multiple))
    return widths


def split_and_mix(inputs, previous, groups):
    """Interleave chunks: group i gets `[inputs chunk i, previous chunk i]`."""
    leading_shape = ops.shape(inputs)[:-1]
    input_chunks = ops.reshape(inputs, (*leading_shape, groups, inputs.shape[-1] // groups))
    previous_chunks = ops.reshape(
        previous, (*leading_shape, groups, previous.shape[-1] // groups)
    )
    mixed = ops.concatenate([input_chunks, previous_chunks], axis=-1)
    return ops.reshape(mixed, (*leading_shape, inputs.shape[-1] + previous.shape[-1]))


@keras.saving.register_keras_serializable(package="keras_subembed")
class DeFINEEmbedding(CompressedEmbedding):
    """Map -> hierarchical group transform (Expand) -> Reduce.

    * **Map**: a `(input_dim, map_dim)` lookup (n small, e.g. 64-128): a
      plain table by default, or any compressed layer of this package given
      as `map_layer` (e.g. a `SubEmbedding`) -- DeFINE over a 99%-compressed
      map.
    * **Expand**: `depth` (N) `GroupLinear` layers. Layer l uses
      `max(max_groups // 2^(l-1), 1)` groups (the last layer 1, as the
      authors' code), and widths grow linearly from n to `expand_dim` (k),
      rounded so each divides by its group counts. Inside each layer:
      optional layer norm (its affine shared across groups) and activation
      (default layer norm and swish, as the authors' code) and dropout.
    * **Split+mix skip link** (`mixer=True`): before every layer after the
      first, the map vector and the previous output are each cut into that
      layer's g chunks and interleaved, so group i sees
      `[map chunk i, previous chunk i]`.
    * **Reduce**: a dense layer from k to `output_dim` (m).

    **Tied logits** (`call(hidden, reverse=True)`), as the authors tie their
    softmax: the hidden state is projected to n by a bias-free
    `output_projection` and scored against the map (`map_layer(...,
    reverse=True)` when the map is a compressed layer, so no V x n table is
    built). This plugs into `keras_hub.layers.MaskedLMHead`.

    Outputs depend only on the token id: `freeze()` caches them in one V x m
    table for inference (paper section 3.4, `freeze_speeds_up`); tied logits
    still use the map.

    Out-of-range ids raise eagerly and give all-zero vectors in compiled
    graphs (see `CompressedEmbedding`).

    Args:
        input_dim: int. Vocabulary size V.
        output_dim: int. Width m of the output vectors.
        map_dim: int. n, width of the map. Defaults to 128, or to
            `map_layer.output_dim`.
        expand_dim: int. k, width of the last HGT layer. Defaults to 1024.
        depth: int. N >= 1, number of HGT layers.
        max_groups: int. g_max, groups of the first HGT layer.
        group_schedule: `"hierarchical"` (HGT: groups halve each layer, the
            last layer dense) or `"fixed"` (GLT: `max_groups` in every layer,
            for the paper's ablation).
        mixer: bool. Use the split+mix skip link to the map vector.
        normalization: `"layer_norm"` or `None`, inside each HGT layer.
        activation: activation inside each HGT layer (default `"swish"`).
        dropout: float in [0, 1). Dropout after each HGT layer.
        map_layer: a `CompressedEmbedding` (or its serialized config) with
            `input_dim` V and `output_dim` n, used as the map.
        embeddings_initializer: initializer of the plain map table.
        kernel_initializer: initializer of the HGT, reduce and projection
            kernels.
        mask_zero: bool, as in `keras.layers.Embedding`.
        cached: bool. Whether the layer is frozen: vectors come from a stored
            V x m table (see `freeze()`).
        **kwargs: `keras.layers.Layer` arguments (`name`, `dtype`, ...).

    Example:
    >>> layer = keras_subembed.layers.DeFINEEmbedding(
    ...     30_522, 256, map_dim=64, expand_dim=512, depth=3, max_groups=4)
    >>> tuple(layer(np.array([[101, 7592, 102]])).shape)
    (1, 3, 256)
    >>> layer.hgt_widths, layer.hgt_groups
    ([212, 362, 512], [4, 2, 1])
    """

    tied_to_table = False
    freeze_speeds_up = True
    # Distinct ids expanded together in training (JAX); the backward pass
    # recomputes each chunk's activations, so this bounds their memory.
    distinct_chunk_size = 2048

    @classmethod
    def from_pretrained(cls, table, map_layer=None, verbose=False, **kwargs):
        """A `DeFINEEmbedding` for a pretrained `(V, d)` token table.

        When `map_layer` is a dict of `SubEmbedding.from_pretrained` arguments
        (no `"class_name"`), the map is a `SubEmbedding` fitted to the table's
        top `map_dim` principal components (default 128), so the map starts
        from what the table knows (clustered codes unless `"assignment"` says
        otherwise: the map's rows must tell tokens apart); any other
        `map_layer` is used as given.
        The group transform and reduction start from their initialisers.

        Example:
        >>> table = np.random.default_rng(0).normal(size=(1000, 32)).astype("float32")
        >>> layer = keras_subembed.layers.DeFINEEmbedding.from_pretrained(
        ...     table, map_dim=16, expand_dim=64, map_layer={"num_tables": 2})
        >>> layer.map_layer.output_dim, tuple(layer.embedding_table().shape)
        (16, (1000, 32))
        """
        table = check_embedding_table(table, name="table")
        verbose = check_bool("verbose", verbose)
        if isinstance(map_layer, dict) and "class_name" not in map_layer:
            kwargs.setdefault("map_dim", 128)
            map_layer = SubEmbedding.from_pretrained(
                principal_components(table, kwargs["map_dim"]),
                verbose=verbose,
                name="define_map",
                dtype=kwargs.get("dtype"),
                **{"assignment": "clustered", **map_layer},
            )
            kwargs.pop("map_dim")
        return super().from_pretrained(table, map_layer=map_layer, **kwargs)

    def __init__(
        self,
        input_dim,
        output_dim,
        map_dim=None,
        expand_dim=1024,
        depth=3,
        max_groups=4,
        group_schedule="hierarchical",
        mixer=True,
        normalization="layer_norm",
        activation="swish",
        dropout=0.0,
        map_layer=None,
        embeddings_initializer="uniform",
        kernel_initializer="glorot_uniform",
        mask_zero=False,
        cached=False,
        **kwargs,
    ):
        super().__init__(
            input_dim, output_dim, mask_zero=mask_zero, cached=cached, **kwargs
        )
        if isinstance(map_layer, dict):
            map_layer = keras.layers.deserialize(map_layer)
        if map_layer is not None:
            map_layer = self._check_map_layer(map_layer, map_dim)
            map_dim = map_layer.output_dim
        self.map_layer = map_layer
        self.map_dim = check_positive_int("map_dim", 128 if map_dim is None else map_dim)
        self.expand_dim = check_positive_int("expand_dim", expand_dim)
        self.depth = check_positive_int("depth", depth)
        self.max_groups = check_positive_int("max_groups", max_groups)
        self.group_schedule = check_choice(
            "group_schedule", group_schedule, ("hierarchical", "fixed")
        )
        self.mixer = check_bool("mixer", mixer)
        self.normalization = check_choice(
            "normalization", normalization, ("layer_norm", None)
        )
        self.activation = keras.activations.get(activation)
        self.dropout = check_rate("dropout", dropout)
        self.hgt_groups = hgt_groups(self.depth, self.max_groups, group_schedule)
        self._check_groupable()
        self.hgt_widths = hgt_widths(self.map_dim, self.expand_dim, self.hgt_groups)
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.group_layers = [
            GroupLinear(
                width,
                groups,
                kernel_initializer=self.kernel_initializer,
                name=f"hgt_{layer}",
                dtype=self.dtype_policy,
            )
            for layer, (width, groups) in enumerate(zip(self.hgt_widths, self.hgt_groups))
        ]
        self.norm_layers = [
            keras.layers.LayerNormalization(
                epsilon=1e-5, name=f"hgt_norm_{layer}", dtype=self.dtype_policy
            )
            for layer in range(self.depth)
            if normalization == "layer_norm"
        ]
        self.dropout_layer = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)
        self.reduce_layer = keras.layers.Dense(
            self.output_dim,
            kernel_initializer=self.kernel_initializer,
            name="reduce",
            dtype=self.dtype_policy,
        )

    def _check_map_layer(self, map_layer, map_dim):
        if not isinstance(map_layer, CompressedEmbedding):
            raise ValueError(
                "`map_layer` must be a layer of keras_subembed.layers (a "
                f"CompressedEmbedding). Received: map_layer={map_layer!r}"
            )
        if map_layer.input_dim != self.input_dim:
            raise ValueError(
                f"`map_layer.input_dim` must equal `input_dim`. Received: "
                f"map_layer.input_dim={map_layer.input_dim}, input_dim={self.input_dim}"
            )
        if map_dim is not None and map_layer.output_dim != map_dim:
            raise ValueError(
                f"`map_layer.output_dim` must equal `map_dim`. Received: "
                f"map_layer.output_dim={map_layer.output_dim}, map_dim={map_dim}"
            )
        return map_layer

    def _check_groupable(self):
        for layer, groups in enumerate(self.hgt_groups):
            if (layer == 0 or self.mixer) and self.map_dim % groups:
                raise ValueError(
                    f"`map_dim`={self.map_dim} cannot be split into the {groups} groups "
                    f"of HGT layer {layer + 1} (groups per layer: {self.hgt_groups}). "
                    "Choose a map_dim divisible by max_groups, or fewer max_groups."
                )
            if layer == len(self.hgt_groups) - 1 and self.expand_dim % groups:
                raise ValueError(
                    f"`expand_dim`={self.expand_dim} cannot be split into the {groups} "
                    f"groups of the last HGT layer."
                )
            if groups > self.expand_dim:
                raise ValueError(
                    f"`expand_dim`={self.expand_dim} is smaller than the {groups} groups "
                    f"of HGT layer {layer + 1}."
                )

    def build_weights(self, input_shape=None):
        if self.map_layer is None:
            self.map_table = self.add_weight(
                name="map_table",
                shape=(self.input_dim, self.map_dim),
                initializer=self.embeddings_initializer,
            )
        else:
            self.map_layer.build()
        previous_width = None
        for layer, group_layer in enumerate(self.group_layers):
            if layer == 0:
                input_width = self.map_dim
            elif self.mixer:
                input_width = self.map_dim + previous_width
            else:
                input_width = previous_width
            group_layer.build((None, input_width))
            if self.norm_layers:
                self.norm_layers[layer].build(
                    (None, group_layer.groups, group_layer.units // group_layer.groups)
                )
            previous_width = group_layer.units
        self.reduce_layer.build((None, self.expand_dim))
        self.output_projection = self.add_weight(
            name="output_projection",
            shape=(self.output_dim, self.map_dim),
            initializer=self.kernel_initializer,
        )

    def map_vectors(self, token_ids):
        """The map step: `(..., map_dim)` vectors of in-range int32 ids."""
        if self.map_layer is not None:
            return self.map_layer(token_ids)
        return ops.take(self.map_table, token_ids, axis=0)

    def expand(self, mapped, training=None):
        """The HGT with its split+mix links: `(..., map_dim)` -> `(..., expand_dim)`."""
        outputs = None
        for layer, group_layer in enumerate(self.group_layers):
            if layer == 0:
                inputs = mapped
            elif self.mixer:
                inputs = split_and_mix(mapped, outputs, group_layer.groups)
            else:
                inputs = outputs
            outputs = group_layer(inputs)
            if self.norm_layers:
                outputs = self._group_norm(self.norm_layers[layer], outputs, group_layer.groups)
            outputs = self.activation(outputs)
            outputs = self.dropout_layer(outputs, training=training)
        return outputs

    @staticmethod
    def _group_norm(norm_layer, outputs, groups):
        leading_shape = ops.shape(outputs)[:-1]
        width = outputs.shape[-1]
        grouped = ops.reshape(outputs, (*leading_shape, groups, width // groups))
        return ops.reshape(norm_layer(grouped), (*leading_shape, width))

    def embed(self, token_ids, training=None):
        return embed_per_distinct_id(self, self._vectors_of_ids, token_ids, training=training)

    def _vectors_of_ids(self, flat_ids, training=None):
        """`(n, output_dim)` vectors of `(n,)` in-range int32 ids."""
        mapped = ops.cast(self.map_vectors(flat_ids), self.compute_dtype)
        return self.reduce_layer(self.expand(mapped, training=training))

    def logits(self, hidden):
        hidden = ops.convert_to_tensor(hidden, dtype=self.compute_dtype)
        projected = ops.matmul(hidden, ops.cast(self.output_projection, self.compute_dtype))
        if self.map_layer is not None:
            return self.map_layer(projected, reverse=True)
        return ops.matmul(projected, ops.transpose(ops.cast(self.map_table, self.compute_dtype)))

    def parameter_count(self):
        """Trainable parameters by formula: map + HGT (+ norms) + reduce + projection."""
        if self.map_layer is None:
            total = self.input_dim * self.map_dim
        else:
            total = self.map_layer.compression_report().trainable_params
        input_width = self.map_dim
        for width, groups in zip(self.hgt_widths, self.hgt_groups):
            total += input_width * width // groups + width  # kernel + bias
            if self.normalization:
                total += 2 * width // groups
            input_width = width + self.map_dim if self.mixer else width
        total += self.expand_dim * self.output_dim + self.output_dim
        return total + self.output_dim * self.map_dim

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "map_dim": self.map_dim,
                "expand_dim": self.expand_dim,
                "depth": self.depth,
                "max_groups": self.max_groups,
                "group_schedule": self.group_schedule,
                "mixer": self.mixer,
                "normalization": self.normalization,
                "activation": keras.activations.serialize(self.activation),
                "dropout": self.dropout,
                "map_layer": (
                    None if self.map_layer is None else keras.layers.serialize(self.map_layer)
                ),
                "embeddings_initializer": keras.initializers.serialize(
                    self.embeddings_initializer
                ),
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            }
        )
        return config


def principal_components(table, width):
    """`table` projected on its top `width` principal directions: a `(V, width)` table."""
    centred = table - table.mean(axis=0, keepdims=True)
    _, _, directions = np.linalg.svd(centred, full_matrices=False)
    return (centred @ directions[:width].T).astype(np.float32)
