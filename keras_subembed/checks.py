"""Argument checks shared by the whole package: one rule for each kind of argument.

Each check returns the value as a plain Python `int`, `float` or `bool`, or
raises a `ValueError` naming the argument and the value received. NumPy
scalars (`np.int64(2)`, `np.float32(0.5)`, `np.bool_(True)`) are accepted
wherever the Python type is, as Keras accepts them.
"""

import numbers

import numpy as np

SEED_LIMIT = 2**32


def is_integer(value):
    """Whether `value` is an integer (NumPy's included) and not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def is_real(value):
    """Whether `value` is a real number (NumPy's included) and not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _checked_int(name, value, allowed, what):
    if not is_integer(value) or not allowed(value):
        raise ValueError(f"`{name}` must be {what}. "
                         f"Received: {name}={value!r} (of type {type(value).__name__}).")
    return int(value)


def _checked_number(name, value, allowed, what):
    if not is_real(value) or not allowed(value):
        raise ValueError(f"`{name}` must be {what}. Received: {name}={value!r}")
    return float(value)


def check_positive_int(name, value):
    """`value` as an int; `ValueError` naming `name` unless it is a positive integer."""
    return _checked_int(name, value, lambda v: v > 0, "a positive integer")


def check_int(name, value):
    """`value` as an int; `ValueError` naming `name` unless it is an integer.

    A float such as 0.7 is refused rather than truncated: an index must be meant.
    """
    return _checked_int(name, value, lambda v: True, "an integer")


def check_non_negative_int(name, value):
    """`value` as an int; `ValueError` naming `name` unless it is an integer >= 0."""
    return _checked_int(name, value, lambda v: v >= 0, "an integer >= 0")


def check_finite_array(name, value):
    """`value` as a float64 NumPy array; `ValueError` naming `name` unless every
    value is a finite number (`TypeError` when they are not numbers)."""
    array = np.asarray(value)
    if array.dtype == bool or not (np.issubdtype(array.dtype, np.number)
                                   or array.dtype.name.startswith(("bfloat", "float"))):
        raise TypeError(f"`{name}` must be an array of numbers. Received dtype {array.dtype}.")
    array = array.astype(np.float64)
    bad = np.argwhere(~np.isfinite(array))
    if bad.size:
        raise ValueError(
            f"`{name}` must hold finite numbers; it has {len(bad)} NaN or infinite values, "
            f"at {[tuple(int(i) for i in index) for index in bad[:3]]}."
        )
    return array


def check_positive_number(name, value):
    """`value` as a float; `ValueError` unless it is a finite number > 0."""
    return _checked_number(name, value, lambda v: 0 < v < float("inf"), "a finite number > 0")


def check_non_negative_number(name, value):
    """`value` as a float; `ValueError` unless it is a finite number >= 0."""
    return _checked_number(name, value, lambda v: 0 <= v < float("inf"), "a finite number >= 0")


def check_bool(name, value):
    """`value` as a bool; `ValueError` naming `name` unless it is one."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"`{name}` must be a bool. Received: {name}={value!r}")
    return bool(value)


def check_seed(seed, name="seed"):
    """A seed in [0, 2**32); drawn at random when `None` (record it in the config)."""
    if seed is None:
        return int(np.random.SeedSequence().entropy % SEED_LIMIT)
    if not is_integer(seed) or not 0 <= seed < SEED_LIMIT:
        raise ValueError(
            f"`{name}` must be an int in [0, 2**32) or None. Received: {name}={seed!r}"
        )
    return int(seed)


def check_rate(name, value):
    """A dropout-like rate in [0, 1) as a float."""
    return _checked_number(name, value, lambda v: 0 <= v < 1, "a float in [0, 1)")


def check_open_probability(name, value):
    """A probability strictly between 0 and 1 as a float."""
    return _checked_number(name, value, lambda v: 0 < v < 1,
                           "a probability strictly between 0 and 1")


def check_choice(name, value, choices):
    """`value` if it is one of `choices` (strings or None), else `ValueError`."""
    if not any(value is choice or (isinstance(value, str) and value == choice)
               for choice in choices):
        shown = " or ".join("None" if c is None else f'"{c}"' for c in choices)
        raise ValueError(f"`{name}` must be {shown}. Received: {name}={value!r}")
    return value


def check_id_values(name, values):
    """Token ids known now (NumPy): `TypeError` unless they are numbers, and
    `ValueError` naming the first few fractional ones.

    A float id must be a whole number: 60.9 is not token 60. NaN and
    infinities pass here; the range check that follows reports them.
    """
    values = np.asarray(values)
    if values.dtype.kind not in "iuf":
        shown = values.flat[0] if values.size else None
        raise TypeError(
            f"`{name}` must hold integer token ids (any integer or float dtype). "
            f"Received: {name} of dtype {values.dtype}, e.g. {shown!r}."
        )
    if values.dtype.kind == "f":
        finite = values[np.isfinite(values)]
        fractional = np.unique(finite[finite != np.floor(finite)])
        if fractional.size:
            raise ValueError(
                f"`{name}` must hold whole-number token ids: a fractional id is not an "
                f"id (it would silently be truncated to another token). Received: "
                f"{fractional[:5].tolist()}{' and more' if fractional.size > 5 else ''}."
            )
    return values
