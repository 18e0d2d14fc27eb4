"""Random assignment: a seeded random injection of ids onto distinct codes."""

import numpy as np

from keras_subembed.assignment.code_space import codes_from_slots
from keras_subembed.assignment.code_space import ordinary_capacity
from keras_subembed.checks import check_seed


def random_codes(num_ids, num_tables, rows_per_table, reserved_ids=(), seed=0):
    """Codes drawn uniformly without replacement; deterministic for a `seed`.

    Reserved ids keep their reserved codes (see `code_space`).

    Example:
    >>> codes = random_codes(1000, num_tables=3, rows_per_table=10, seed=1)
    >>> len({tuple(c) for c in codes})
    1000
    """
    num_reserved = len(tuple(reserved_ids))
    seed = check_seed(seed)
    capacity = ordinary_capacity(rows_per_table, num_tables, num_reserved)
    rng = np.random.default_rng(seed)
    slots = rng.choice(capacity, size=num_ids - num_reserved, replace=False)
    return codes_from_slots(
        slots, num_ids, rows_per_table, num_tables, reserved_ids
    )
