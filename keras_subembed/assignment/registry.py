"""The registry of code assignments: the one place a new assignment is added.

An assignment decides which sub-table row each token uses in each of the K
tables of a `SubEmbedding`. The layer looks assignments up here by name, in
its constructor and in `from_pretrained`, so it fits codes without knowing
the assignment. Each assignment is one module with one function:

    fit(table, num_tables, rows_per_table, token_weights=None, reserved_ids=(),
        seed=0, distinct_codes=..., verbose=False) -> codes

`table` is the pretrained `(V, d)` table, or for an assignment that reads no
vectors (registered with `reads_table=False`) the number of ids V; the codes
are an integer array `(V, num_tables)`, every code below `rows_per_table`,
which the layer checks and stores. A function takes the keywords it uses
(`digit_codes` takes no `seed`) and any options of its own, which
`from_pretrained(..., assignment_options={...})` passes on.

Example:
>>> ASSIGNMENTS["product"].reads_table, ASSIGNMENTS["random"].reads_table
(True, False)
>>> fit_codes("random", 10, num_tables=2, rows_per_table=4, seed=1).shape
(10, 2)
"""

import dataclasses
import inspect
import numbers
import types

import numpy as np

from keras_subembed.assignment.clustered import clustered_codes
from keras_subembed.assignment.digits import digit_codes
from keras_subembed.assignment.product import DEFAULT_ROWS_PER_TABLE
from keras_subembed.assignment.product import product_codes
from keras_subembed.assignment.random_codes import random_codes
from keras_subembed.checks import check_bool
from keras_subembed.checks import check_positive_int

# The keywords every assignment may take, named alike everywhere.
FIT_KEYWORDS = ("token_weights", "reserved_ids", "seed", "distinct_codes", "verbose")
# Product codes of one byte per 12 columns: the best >= 30x setting measured on
# MiniLM (K=32, M=256 on 384 columns, benchmarks/bench_codes.py).
_PRODUCT_COLUMNS_PER_CODE = 12


@dataclasses.dataclass(frozen=True)
class Assignment:
    """A registered assignment: its `fit` and what a layer must know of it
    (the arguments of `register_assignment`)."""

    fit: object
    reads_table: bool = True
    stored: bool = True
    num_tables: object = None
    rows_per_table: int = None
    distinct_codes: bool = True


_ASSIGNMENTS = {}
# Read-only; `register_assignment` adds to it.
ASSIGNMENTS = types.MappingProxyType(_ASSIGNMENTS)


def register_assignment(name, fit, reads_table=True, num_tables=None, rows_per_table=None,
                        distinct_codes=True, stored=True):
    """Add (or re-register identically) an assignment under the short name `name`.

    Args:
        name: str. The name `SubEmbedding(assignment=...)` takes.
        fit: callable `fit(table, num_tables, rows_per_table, **keywords)`
            returning integer codes `(V, num_tables)`; it may take any of
            `FIT_KEYWORDS` and options of its own.
        reads_table: bool, default True. False when `fit` needs only the
            number of ids (its first argument is then V, not a table).
        num_tables: optional callable `width -> K`, the default K.
        rows_per_table: optional int, the default M.
        distinct_codes: bool, default True. Whether the codes are distinct
            per id (False: tokens may share a code tuple, as product codes).
        stored: bool, default True. False only for `"digits"`.

    Returns:
        The registered `Assignment`.

    Example:
    >>> def stripes(num_ids, num_tables, rows_per_table, seed=0):
    ...     ids = np.arange(num_ids)[:, None]
    ...     return (ids + seed * np.arange(num_tables)) % rows_per_table
    >>> register_assignment("stripes", stripes, reads_table=False, distinct_codes=False).stored
    True
    >>> layer = keras_subembed.layers.SubEmbedding(
    ...     40, 6, num_tables=3, rows_per_table=7, assignment="stripes", seed=2,
    ...     distinct_codes=False)
    >>> layer.code_array()[9].tolist()
    [2, 4, 6]
    """
    if not isinstance(name, str) or not name or name == "explicit":
        raise ValueError(
            "`name` must be a non-empty string other than \"explicit\" (saved codes). "
            f"Received: name={name!r}")
    if not callable(fit):
        raise TypeError(f"`fit` must be callable. Received: fit={fit!r}")
    if num_tables is not None and not callable(num_tables):
        raise TypeError(
            "`num_tables` must be None or a callable `width -> K` (the default K for a "
            f"table of that width). Received: num_tables={num_tables!r}")
    if rows_per_table is not None:
        rows_per_table = check_positive_int("rows_per_table", rows_per_table)
    reads_table, distinct_codes, stored = (
        check_bool(flag, value) for flag, value in (
            ("reads_table", reads_table), ("distinct_codes", distinct_codes), ("stored", stored)))
    # A layer computes codes in its graph only for digit codes; for any other
    # unstored assignment it would read a codes weight nothing fills: every
    # token the same vector.
    if not stored and fit is not digit_codes:
        raise ValueError(
            "`stored=False` is only for the digit codes (`digit_codes`), which the layer "
            "computes in its graph; it stores every other assignment's codes. "
            f"Received: stored=False for {name!r} (fit={getattr(fit, '__name__', fit)!r})")
    assignment = Assignment(fit, reads_table, stored, num_tables, rows_per_table, distinct_codes)
    existing = _ASSIGNMENTS.get(name)
    if existing is not None and existing != assignment:
        raise ValueError(f"Assignment {name!r} is already registered as {existing}.")
    _ASSIGNMENTS[name] = assignment
    return assignment


def get_assignment(name):
    """The `Assignment` registered as `name`; a `ValueError` lists the names."""
    if not isinstance(name, str) or name not in _ASSIGNMENTS:
        raise ValueError(
            f"`assignment` must be one of {sorted(_ASSIGNMENTS)}, \"explicit\" or an "
            f"integer array of codes. Received: assignment={name!r}")
    return _ASSIGNMENTS[name]


def fit_codes(name, table, num_tables, rows_per_table, **keywords):
    """The codes of the assignment `name` for `table` (or V ids).

    `keywords` (`FIT_KEYWORDS` and the assignment's own options) go to its
    `fit`; a `FIT_KEYWORDS` entry it does not take is left out (digit codes
    use no seed), any other it does not take is refused.
    """
    assignment = get_assignment(name)
    parameters = inspect.signature(assignment.fit).parameters
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        taken = keywords
    else:
        unknown = sorted(set(keywords) - set(parameters) - set(FIT_KEYWORDS))
        if unknown:
            raise ValueError(
                f"Assignment {name!r} takes no option {', '.join(map(repr, unknown))}; "
                f"its options: {', '.join(sorted(set(parameters) - {'table', 'num_ids'}))}.")
        taken = {key: value for key, value in keywords.items() if key in parameters}
    if not assignment.reads_table:
        table = _number_of_ids(name, table)
    codes = assignment.fit(table, num_tables, rows_per_table, **taken)
    # None or a scalar would reach the layer as no codes at all: every token the same vector.
    if codes is None or np.ndim(codes) != 2:
        raise ValueError(
            f"Assignment {name!r}: its fit {getattr(assignment.fit, '__name__', '')!r} must "
            f"return integer codes of shape (number of ids, num_tables={num_tables}). "
            f"Received: {codes!r:.80}")
    return codes


def _number_of_ids(name, table):
    """V for an assignment that reads no table: `table` is V or a table of V rows."""
    if isinstance(table, numbers.Integral) and not isinstance(table, bool):
        return check_positive_int("table", table)
    if isinstance(table, (str, bytes)) or not hasattr(table, "__len__"):
        raise ValueError(
            f"`table` must be the number of ids (a positive int) or a table of that many "
            f"rows for assignment {name!r}, which reads no vectors. Received: table={table!r:.60}")
    return len(table)


def product_num_tables(width):
    """One one-byte code per 12 columns: 32 on a 384-wide table."""
    return max(1, width // _PRODUCT_COLUMNS_PER_CODE)


register_assignment("digits", digit_codes, reads_table=False, stored=False)
register_assignment("random", random_codes, reads_table=False)
register_assignment(
    "product", product_codes, distinct_codes=False, rows_per_table=DEFAULT_ROWS_PER_TABLE,
    num_tables=product_num_tables)
register_assignment("clustered", clustered_codes)
