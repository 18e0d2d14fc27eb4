"""Any keras-hub text encoder with its token embedding swapped for a compressed one."""

import keras
import keras_hub
import numpy as np

from keras_subembed.checks import check_positive_int
from keras_subembed.layers.compressed_embedding import CompressedEmbedding
from keras_subembed.layers.embedding_kinds import EMBEDDING_KINDS
from keras_subembed.layers.embedding_kinds import make_pretrained_embedding
from keras_subembed.layers.embedding_kinds import register_embedding_kind
from keras_subembed.layers.positional_token_embedding import PositionalTokenEmbedding
from keras_subembed.models.presets import save_to_preset

SUPPORTED_BACKBONES = (
    "BertBackbone",
    "RobertaBackbone",
    "XLMRobertaBackbone",
    "DistilBertBackbone",
    "CompressedRobertaBackbone",
    "CompressedBackbone",
)
SUPPORTED_MESSAGE = (
    f"Supported: {', '.join(SUPPORTED_BACKBONES)} (any keras-hub Backbone whose "
    "token embedding is a layer of its functional graph, alone or inside "
    "TokenAndPositionEmbedding)."
)
# keras-hub layers that own the token embedding together with the positions.
_TOKEN_AND_POSITION_LAYERS = (
    keras_hub.layers.TokenAndPositionEmbedding,
    PositionalTokenEmbedding,
)


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
    >>> layer = pretrained_token_embedding(table, "sub",
    ...     {"num_tables": 2, "rows_per_table": 256})
    """
    table = np.asarray(table, dtype=np.float32)
    if table.ndim != 2:
        raise ValueError(f"`table` must be a (V, d) array. Received shape {table.shape}.")
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


# keras-hub backbone class -> the `CompressedBackbone` subclass that stands
# for its compressed form (see `compressed_text_embedder`); others get
# `CompressedBackbone` itself.
_COMPRESSED_CLASSES = {}


def register_compressed_backbone_class(source_cls, compressed_cls):
    """`compress_backbone` makes a `compressed_cls` of a `source_cls` (or of a
    `compressed_cls`, compressed again)."""
    _COMPRESSED_CLASSES[source_cls] = compressed_cls
    _COMPRESSED_CLASSES[compressed_cls] = compressed_cls


def _embedding_node(backbone):
    """The layer of `backbone`'s graph that holds its token embedding."""
    embedding = getattr(backbone, "token_embedding", None)
    supported = SUPPORTED_MESSAGE
    if not isinstance(backbone, keras_hub.models.Backbone) or not isinstance(
        embedding, (keras.layers.Embedding, CompressedEmbedding)
    ):
        raise TypeError(
            "`backbone` must be a keras-hub text encoder with a `token_embedding` "
            f"layer. Received: backbone={backbone!r:.80} (a {type(backbone).__name__}). "
            f"{supported}"
        )
    for layer in backbone.layers:
        if layer is embedding:
            return layer
        if isinstance(layer, _TOKEN_AND_POSITION_LAYERS) and layer.token_embedding is embedding:
            return layer
    raise TypeError(
        f"Cannot compress a {type(backbone).__name__}: its token embedding is not a "
        f"layer of its functional graph. {supported}"
    )


@keras.saving.register_keras_serializable(package="keras_subembed")
class CompressedBackbone(keras_hub.models.Backbone):
    """A keras-hub text encoder whose token embedding is another layer.

    The architecture is the one of `backbone` (a serialized keras-hub
    `Backbone`: `BertBackbone`, `RobertaBackbone`, `XLMRobertaBackbone`,
    `DistilBertBackbone`, `CompressedRobertaBackbone`, ...): same inputs, same
    outputs, same layer names, with the token embedding replaced by
    `token_embedding`. Its configuration attributes (`vocabulary_size`,
    `hidden_dim`, `num_layers`, ...) are copied, so keras-hub task models
    that take a backbone (`BertTextClassifier`, `RobertaMaskedLM`, ...) use it
    as they use the original.

    Build one with `keras_subembed.models.compress_backbone(backbone)`, which
    also copies the pretrained weights.

    Args:
        backbone: the serialized source backbone
            (`keras.saving.serialize_keras_object(backbone)`): it describes
            the architecture only; no weights are read from it.
        token_embedding: the new token-embedding layer (or its config).
        embedding_projection: optional `keras.layers.Dense` after a token
            embedding narrower than the model (ALBERT-style; RoBERTa-like
            backbones only, see `PositionalTokenEmbedding`).
    """

    def __init__(self, backbone, token_embedding, embedding_projection=None, dtype=None, **kwargs):
        token_embedding, embedding_projection = (
            keras.layers.deserialize(layer) if isinstance(layer, dict) else layer
            for layer in (token_embedding, embedding_projection)
        )
        source = keras.saving.deserialize_keras_object(backbone)
        node = _embedding_node(source)
        width, output_dim = source.token_embedding.output_dim, token_embedding.output_dim
        if embedding_projection is not None:
            if node is source.token_embedding:
                raise ValueError(
                    "`embedding_projection` needs a backbone whose positions are added "
                    f"with the tokens (RoBERTa-like); a {type(source).__name__} has none."
                )
            width = node.compute_output_shape((None, None))[-1]
            output_dim = embedding_projection.units
        elif getattr(node, "projection", None) is not None:
            embedding_projection = _fresh_copy(node.projection)  # kept, as the positions are
        if token_embedding.input_dim != source.token_embedding.input_dim or output_dim != width:
            raise ValueError(
                f"`token_embedding` maps {token_embedding.input_dim} ids to width "
                f"{output_dim}; the {type(source).__name__} needs "
                f"{source.token_embedding.input_dim} ids and width {width}."
            )
        replacement = token_embedding
        if node is not source.token_embedding:
            replacement = PositionalTokenEmbedding(
                token_embedding,
                _fresh_copy(node.position_embedding),
                projection=embedding_projection,
                dtype=node.dtype_policy,
                name=node.name,
            )
        # Fresh layers (not the source's): each is then called once, in this
        # graph only, so `layer.output` stays unambiguous (distillation reads
        # hidden states that way).
        try:
            graph = keras.models.clone_model(
                source,
                clone_function=lambda layer: replacement if layer is node else _fresh_copy(layer),
            )
        except Exception as error:  # a layer that cannot be rebuilt from its config
            raise _not_copyable(source, error) from error
        super().__init__(
            inputs=graph.input,
            outputs=graph.output,
            dtype=dtype if dtype is not None else source.dtype_policy,
            **kwargs,
        )
        for key, value in source.get_config().items():
            if key not in ("name", "trainable", "dtype") and isinstance(
                value, (int, float, str, bool, type(None))
            ):
                setattr(self, key, value)
        for attribute in ("cls_token_index", "start_token_index"):
            if hasattr(source, attribute):
                setattr(self, attribute, getattr(source, attribute))
        self.token_embedding = token_embedding
        self.embedding_projection = embedding_projection
        self.source_backbone = backbone

    save_to_preset = save_to_preset

    def load_weights(self, filepath, *args, **kwargs):
        try:
            return super().load_weights(filepath, *args, **kwargs)
        except ValueError as error:
            # Keras says "expected 5 variables, but received 0" when a preset's
            # config was edited; name the shapes that differ instead.
            mismatch = _token_embedding_mismatch(self.token_embedding, filepath)
            if mismatch is None:
                raise
            raise ValueError(mismatch) from error

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "backbone": self.source_backbone,
                "token_embedding": keras.layers.serialize(self.token_embedding),
            }
        )
        if self.embedding_projection is not None:
            config["embedding_projection"] = keras.layers.serialize(self.embedding_projection)
        return config


def _token_embedding_mismatch(embedding, filepath):
    """A message naming how `embedding`'s weights differ from those stored for it
    in the `.weights.h5` file, or None when they agree (or cannot be read)."""
    import h5py

    stored = []

    def visit(name, item):
        if isinstance(item, h5py.Group) and item.attrs.get("name") == embedding.name:
            stored.extend(tuple(item[key].shape) for key in sorted(item, key=int))

    try:
        with h5py.File(filepath, "r") as file:
            file.visititems(visit)
    except (OSError, ValueError):
        return None
    wanted = [(weight.path.split("/")[-1], tuple(weight.shape)) for weight in embedding.weights]
    if stored == [shape for _, shape in wanted]:
        return None
    config = {key: value for key, value in embedding.get_config().items()
              if key in ("input_dim", "output_dim", "num_tables", "rows_per_table", "pack_codes")}
    return (
        f"The weights file {str(filepath)!r} does not fit the model its config describes: "
        f"the token embedding {embedding.name!r} ({type(embedding).__name__}, {config}) needs "
        f"weights {', '.join(f'{name} {shape}' for name, shape in wanted)}; the file holds "
        f"{', '.join(map(str, stored)) or 'none under that name'}. Was the preset's "
        "config.json or task.json edited?"
    )


def _not_copyable(backbone, error):
    """The TypeError for a backbone whose layers cannot be rebuilt (a decoder
    such as Gemma, whose RMSNormalization has no config)."""
    reason = " ".join(str(error).split())
    return TypeError(
        f"Cannot compress a {type(backbone).__name__}: it is not a supported text encoder "
        f"(its layers cannot be copied: {type(error).__name__}: {reason[:120]}"
        f"{'...' if len(reason) > 120 else ''}). {SUPPORTED_MESSAGE}"
    )


def _check_copyable(backbone):
    """Fail before any codes are fitted when a layer has no usable config."""
    for layer in backbone.layers:
        try:
            layer.get_config()
        except Exception as error:
            raise _not_copyable(backbone, error) from error


def _fresh_copy(layer):
    # Trainable whatever the source: a teacher frozen for distillation must
    # not hand its frozen state to a student built from it.
    config = layer.get_config()
    if "trainable" in config:  # layers have it; graph operations (GetItem) do not
        config["trainable"] = True
    return layer.__class__.from_config(config)


def _non_embedding_weights(model, rename):
    # `weights`, not `variables`: dropout seed states are named by a global
    # counter and are no model state worth copying.
    skipped = {id(weight) for weight in model.token_embedding.weights}
    return {rename(w.path): w for w in model.weights if id(w) not in skipped}


def copy_non_embedding_weights(source, target, rename=lambda path: path):
    """Assign every weight of `source` outside its token embedding to `target`'s.

    Weights are matched by path (`transformer_layer_0/.../kernel`), after
    `rename` on both sides; the two sets must be the same, which is what
    makes the copy exact.
    """
    source_variables = _non_embedding_weights(source, rename)
    target_variables = _non_embedding_weights(target, rename)
    if source_variables.keys() != target_variables.keys():
        missing = sorted(source_variables.keys() ^ target_variables.keys())
        raise ValueError(
            f"The backbones' non-embedding weights differ: {missing[:5]} "
            f"({len(missing)} in all)."
        )
    for path, variable in target_variables.items():
        # A copy, not the source's buffer: JAX donates variable buffers to
        # compiled steps, which would delete one model's weights under the other.
        value = keras.ops.convert_to_numpy(source_variables[path])
        if tuple(variable.shape) != value.shape and _POSITION_TABLE in path:
            value = value[: variable.shape[0]]  # a shortened model keeps the first positions
        variable.assign(value)


_POSITION_TABLE = "position_embedding/"


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
    >>> teacher = keras_hub.models.BertBackbone.from_preset(minilm_preset_dir())
    >>> student = compress_backbone(teacher, "sub",
    ...     {"num_tables": 2, "rows_per_table": 1024})
    """
    _embedding_node(backbone)  # a clear error before any work
    _check_copyable(backbone)
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
    compressed_cls = _COMPRESSED_CLASSES.get(type(backbone), CompressedBackbone)
    compressed = compressed_cls(
        backbone=source_config,
        token_embedding=token_embedding,
        name=backbone.name,
    )
    copy_non_embedding_weights(backbone, compressed)
    return compressed


def _name_missing_weights():
    """Make keras-hub name `model.weights.h5` when a preset of ours has no weights.

    keras-hub looks for the single file, then for the sharded index
    `model.weights.json`, and reports only the latter missing. Its loader has
    no hook, so its weight-loading step is wrapped, for this package's
    backbones only; nothing changes when keras-hub's internals do.
    """
    try:
        from keras_hub.src.utils import preset_utils
    except ImportError:  # pragma: no cover - another keras-hub layout
        return
    loader = getattr(preset_utils, "KerasPresetLoader", None)
    original = getattr(loader, "_load_backbone_weights", None)
    if original is None or getattr(original, "_keras_subembed", False):
        return

    def _load_backbone_weights(self, backbone):
        files = (preset_utils.MODEL_WEIGHTS_FILE, preset_utils.SHARDED_MODEL_WEIGHTS_CONFIG_FILE)
        if isinstance(backbone, CompressedBackbone) and not any(
                preset_utils.check_file_exists(self.preset, name) for name in files):
            raise FileNotFoundError(
                f"The preset {str(self.preset)!r} has no weights: {files[0]} is missing "
                f"(nor is it sharded: no {files[1]})."
            )
        return original(self, backbone)

    _load_backbone_weights._keras_subembed = True
    loader._load_backbone_weights = _load_backbone_weights


_name_missing_weights()
