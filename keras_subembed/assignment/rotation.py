"""A rotation of a pretrained table's columns that product codes rebuild better.

Product codes cluster each column chunk on its own, so whatever the chunks share is coded
twice and a chunk with little variance wastes its 256 rows. Optimized product quantization
(Ge, He, Ke and Sun, CVPR 2013) first rotates the table: the principal directions are dealt
to the chunks so that each gets a like product of variances ("eigenvalue allocation"), then
codes fitted to `table @ R` and the rotation refitted to them (an orthogonal Procrustes
problem) alternate. On multilingual-e5-small's 250k x 384 table, 32 codes a token rebuild
the table with 0.36 of its weighted squared norm left over, against 0.44 unrotated
(benchmarks/RESULTS.md, "The size frontier").
"""

import numpy as np

from keras_subembed.assignment.clustered import check_embedding_table
from keras_subembed.assignment.product import product_codes
from keras_subembed.assignment.product import sub_widths
from keras_subembed.assignment.reconstruction import least_squares_sub_tables
from keras_subembed.assignment.validation import check_reserved_ids
from keras_subembed.assignment.validation import check_token_weights
from keras_subembed.checks import check_non_negative_int
from keras_subembed.checks import check_positive_int
from keras_subembed.checks import check_seed

# Rows the rotation is fitted on; faiss' OPQ samples too. Every row is coded afterwards.
DEFAULT_SAMPLE_SIZE = 65_536


def product_rotation(table, num_tables, rows_per_table=256, token_weights=None,
                     reserved_ids=(), seed=0, iterations=6, sample_size=DEFAULT_SAMPLE_SIZE):
    """An orthogonal `(width, width)` float32 matrix `R` for product codes of `table @ R`.

    The layer stores `R.T` and rebuilds a row as its sub-vectors side by side times `R.T`
    (`SubEmbedding.from_pretrained(..., rotation=True)`).

    Args:
        table: float array `(V, width)`, the pretrained table.
        num_tables, rows_per_table: the product codes' K and M.
        token_weights: optional non-negative `(V,)` weights: the rotation, like the codes,
            cares most about heavy tokens.
        reserved_ids: ids whose rows the codes keep exact (`product_codes`); they are
            not sampled, nor are ids of weight 0.
        seed: makes the sample and the k-means deterministic.
        iterations: rounds of codes and Procrustes after the eigenvalue allocation; 0
            gives the allocated PCA basis.
        sample_size: rows the rotation is fitted on (all rows when fewer).

    Example:
    >>> table = np.random.default_rng(0).normal(size=(500, 8)) * [4, 3, 2, 1, 1, 1, 1, 1]
    >>> rotation = product_rotation(table, num_tables=2, rows_per_table=16, iterations=1)
    >>> bool(np.allclose(rotation @ rotation.T, np.eye(8), atol=1e-5))
    True
    """
    table = check_embedding_table(table, name="table")
    num_ids, width = table.shape
    num_tables = check_positive_int("num_tables", num_tables)
    if num_tables > width:
        raise ValueError("`num_tables` cannot exceed the table's width. Received: "
                         f"num_tables={num_tables}, width={width}")
    rows_per_table = check_positive_int("rows_per_table", rows_per_table)
    iterations = check_non_negative_int("iterations", iterations)
    sample_size = check_positive_int("sample_size", sample_size)
    seed = check_seed(seed)
    weights = (np.ones(num_ids) if token_weights is None
               else check_token_weights(token_weights, num_ids, "token_weights"))
    reserved = check_reserved_ids(reserved_ids, num_ids)
    ordinary = np.setdiff1d(np.arange(num_ids), reserved)
    if not len(ordinary):
        raise ValueError(
            f"`reserved_ids` hold every one of the table's {num_ids} ids: no ordinary id is "
            f"left to fit the rotation on. Received: reserved_ids={tuple(reserved_ids)!r:.100}")
    # Rows of weight 0 do not count in the fit: sample the others.
    counted = ordinary[weights[ordinary] > 0]
    if not len(counted):
        raise ValueError("`token_weights` are zero for every ordinary (not reserved) id: the "
                         "rotation has no row to fit. Give some token a positive weight.")
    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(counted, min(sample_size, len(counted)), replace=False))
    points, weights = table[sample].astype(np.float64), weights[sample]
    mean = weights @ points / weights.sum()
    centred = points - mean
    variances, directions = np.linalg.eigh(centred.T @ (centred * weights[:, None]))
    widths = sub_widths(width, num_tables)
    # Largest variance first, each to the open chunk whose log-variance sum is lowest. The
    # logs are taken relative to a floor below every variance, so each is >= 0 whatever
    # the table's scale: a negative one would make a chunk "lower" for every direction
    # it took, and the first chunk would take all the largest.
    floor = max(float(variances.max()), 1e-30) * 1e-12
    log_variances = np.log(np.maximum(variances, floor) / floor)
    chunks, log_variance = [[] for _ in widths], np.zeros(num_tables)
    for direction in np.argsort(-variances, kind="stable"):
        chosen = min((k for k in range(num_tables) if len(chunks[k]) < widths[k]),
                     key=lambda k: log_variance[k])
        chunks[chosen].append(direction)
        log_variance[chosen] += log_variances[direction]
    rotation = directions[:, np.concatenate(chunks).astype(int)]
    for _ in range(iterations):
        rotated = (points @ rotation).astype(np.float32)
        # The loop only steers the rotation: a few Lloyd steps a round are enough.
        codes = product_codes(rotated, num_tables, rows_per_table, token_weights=weights,
                              seed=seed, max_iterations=8)
        sub_tables = least_squares_sub_tables(rotated, codes, rows_per_table, widths, weights)
        rebuilt = np.concatenate([sub_table[codes[:, k]] for k, sub_table
                                  in enumerate(sub_tables)], axis=1)
        left, _, right = np.linalg.svd((points * weights[:, None]).T @ rebuilt)
        rotation = left @ right
    return rotation.astype(np.float32)
