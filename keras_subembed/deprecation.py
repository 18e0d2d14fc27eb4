"""Retired names: one `DeprecationWarning` per name and process, and files
that still load."""

import warnings

import keras

_WARNED = set()


def warn_deprecated(name, replacement):
    """Warn, once, that `name` is deprecated in favour of `replacement`."""
    if name in _WARNED:
        return
    _WARNED.add(name)
    warnings.warn(
        f"keras_subembed.models.{name} is deprecated and will be removed: use "
        f"{replacement} instead.",
        DeprecationWarning,
        stacklevel=3,
    )


def register_retired_class(cls):
    """Let Keras load files naming `keras_subembed>{cls.__name__}` through
    `cls.from_config`, which builds the class that replaced it (a retired name
    has no instances, hence no `get_config`, so the decorator cannot be used)."""
    keras.saving.get_custom_objects()[f"keras_subembed>{cls.__name__}"] = cls
    return cls
