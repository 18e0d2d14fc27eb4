"""One `DeprecationWarning` per retired name and process."""

import warnings

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
