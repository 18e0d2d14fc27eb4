"""The registry of token-embedding kinds: the one place a new kind is added.

Models, export, the command line and the examples look kinds up here by short
name. A kind is a layer class (with tied logits, `call(x, reverse=True)`),
default constructor arguments and a door for pretrained tables
(`cls.from_pretrained(table, **kwargs)` unless the entry names another), so
models compress a table without knowing the kind. The compressed layers of this package are
registered below; higher floors register theirs (the models floor adds the
dense `"embedding"` baseline, keras-hub's `ReversibleEmbedding`) so that
this module needs nothing above it.

What a kind can do is read from its class, beside `tied_to_table`:
`freeze_speeds_up` (see `CompressedEmbedding`).

Example:
>>> kind = EMBEDDING_KINDS["sub"]
>>> kind.cls.__name__, kind.cls.freeze_speeds_up
('SubEmbedding', False)
>>> layer = make_embedding("alone", input_dim=1000, output_dim=16, seed=1)
>>> embedding_kind_name(layer)
'alone'
"""

import dataclasses
import types

import keras

from keras_subembed.layers.alone_embedding import ALONEEmbedding
from keras_subembed.layers.define_embedding import DeFINEEmbedding
from keras_subembed.layers.split_embedding import SplitEmbedding
from keras_subembed.layers.sub_embedding import SubEmbedding


@dataclasses.dataclass(frozen=True)
class EmbeddingKind:
    """A layer class, the constructor arguments it gets unless overridden, and
    how it starts from a pretrained table (`None`: `cls.from_pretrained`)."""

    cls: type
    defaults: types.MappingProxyType
    from_pretrained: object = None


_EMBEDDING_KINDS = {}
# Read-only; `register_embedding_kind` adds to it.
EMBEDDING_KINDS = types.MappingProxyType(_EMBEDDING_KINDS)


def register_embedding_kind(name, cls, defaults=None, from_pretrained=None):
    """Add (or re-register identically) a kind under the short name `name`.

    Args:
        name: str. The short name (e.g. `"sub"`).
        cls: a `keras.layers.Layer` subclass taking `input_dim` and
            `output_dim` and supporting `call(hidden, reverse=True)`.
        defaults: dict of constructor arguments applied unless given.
        from_pretrained: callable `(table, verbose=False, **kwargs) -> layer`
            for classes without a `from_pretrained` classmethod.

    Returns the registered `EmbeddingKind`.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"`name` must be a non-empty string. Received: name={name!r}")
    if not (isinstance(cls, type) and issubclass(cls, keras.layers.Layer)):
        raise ValueError(
            f"`cls` must be a keras.layers.Layer subclass. Received: cls={cls!r}"
        )
    kind = EmbeddingKind(cls, types.MappingProxyType(dict(defaults or {})), from_pretrained)
    existing = _EMBEDDING_KINDS.get(name)
    if existing is not None and existing != kind:
        raise ValueError(
            f"Embedding kind {name!r} is already registered as "
            f"{existing.cls.__name__} with defaults {dict(existing.defaults)}."
        )
    _EMBEDDING_KINDS[name] = kind
    return kind


def _registered(kind):
    if kind not in EMBEDDING_KINDS:
        raise ValueError(
            f"Unknown embedding kind {kind!r}. Registered kinds: "
            f"{sorted(EMBEDDING_KINDS)}."
        )
    return EMBEDDING_KINDS[kind]


def make_embedding(kind, /, **kwargs):
    """A new layer of kind `kind`: its defaults, overridden by `kwargs`.

    `kind` is positional-only, so `name=` stays free for the layer's name.
    """
    registered = _registered(kind)
    return registered.cls(**{**registered.defaults, **kwargs})


def make_pretrained_embedding(kind, table, /, **kwargs):
    """A layer of kind `kind` that starts from the pretrained `(V, d)` `table`.

    Example:
    >>> table = np.random.default_rng(0).normal(size=(1000, 32)).astype("float32")
    >>> layer = make_pretrained_embedding("sub", table, assignment="product",
    ...     num_tables=8, rows_per_table=16)
    >>> layer.num_tables, layer.pack_codes
    (8, True)
    """
    registered = _registered(kind)
    from_pretrained = registered.from_pretrained or getattr(
        registered.cls, "from_pretrained", None)
    if from_pretrained is None:
        raise ValueError(
            f"Embedding kind {kind!r} ({registered.cls.__name__}) cannot start from a "
            "pretrained table: register it with `from_pretrained=`."
        )
    return from_pretrained(table, **{**registered.defaults, **kwargs})


def embedding_kind_name(layer):
    """The short name whose class is exactly `type(layer)`, or `None`."""
    for name, kind in EMBEDDING_KINDS.items():
        if type(layer) is kind.cls:
            return name
    return None


register_embedding_kind("sub", SubEmbedding)
register_embedding_kind("alone", ALONEEmbedding)
register_embedding_kind("define", DeFINEEmbedding)
register_embedding_kind("split", SplitEmbedding)
