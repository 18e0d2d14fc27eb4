"""Product codes: k-means in each sub-space of a pretrained table, independently.

Product quantization splits the table's columns into the layer's K sub-widths
and clusters each column chunk on its own, so token n's code k is the nearest
of M centroids to its k-th chunk. Unlike Algorithm 2 (`clustered_codes`),
codes need not be distinct: two tokens may share a code tuple and then share
a vector. At equal bytes, many narrow sub-spaces with one-byte codes
(e.g. K=32, M=256 on a 384-wide table) rebuild a pretrained table far better
than a few wide ones, because each chunk is clustered at full resolution.

Reserved ids (pad, cls, sep, mask, ...) keep their exact rows: the j-th one
gets code `(j, j, ..., j)` and rows `0 .. R-1` of *every* table belong to
reserved ids alone, so the least-squares sub-tables reproduce their vectors
exactly. Ordinary tokens are clustered into the other `M - R` rows.
"""

import keras
import numpy as np
from sklearn.cluster import KMeans
from sklearn.metrics import pairwise_distances_argmin
from sklearn.metrics.pairwise import euclidean_distances

from keras_subembed.assignment.clustered import check_embedding_table
from keras_subembed.assignment.code_space import check_rows_limit
from keras_subembed.assignment.validation import check_reserved_ids
from keras_subembed.assignment.validation import check_token_weights
from keras_subembed.checks import check_bool
from keras_subembed.checks import check_positive_int
from keras_subembed.checks import check_seed

DEFAULT_ROWS_PER_TABLE = 256


def sub_widths(width, num_tables):
    """Column count of each of `num_tables` chunks of `width` (first ones wider by 1)."""
    base, extra = divmod(width, num_tables)
    return [base + 1] * extra + [base] * (num_tables - extra)


def kmeans_centers(points, num_clusters, seed, max_iterations=30, weights=None):
    """`(num_clusters, width)` centers by weighted k-means (scikit-learn's, k-means++ seeds).

    Each center is the `weights`-weighted mean of its points, so heavy
    points pull centers toward themselves. With fewer points than clusters,
    each point is a center and the rest are unused zeros.
    """
    points = np.asarray(points, dtype=np.float32)
    if points.shape[0] <= num_clusters:
        centers = np.zeros((num_clusters, points.shape[1]), dtype=np.float32)
        centers[: points.shape[0]] = points
        return centers
    model = KMeans(num_clusters, n_init=1, max_iter=max_iterations, random_state=seed)
    return model.fit(points, sample_weight=weights).cluster_centers_.astype(np.float32)


def _make_distinct(codes, distances, num_choices):
    """Move tokens that share a code tuple until every tuple is unique.

    `codes` is `(n, K)` in `[0, num_choices)`; `distances[k]` is `(n,
    num_choices)`. Of each group sharing a tuple, the member closest to it
    stays; each other member takes the cheapest single change (one sub-space,
    its next-nearest centroids first) that gives a tuple no token holds.
    """
    num_tokens, num_tables = codes.shape
    codes = codes.copy()
    _, inverse, counts = np.unique(codes, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    if counts.max() <= 1:
        return codes
    own_cost = sum(distances[k][np.arange(num_tokens), codes[:, k]] for k in range(num_tables))
    # Closest member first within each group; it keeps the tuple.
    order = np.lexsort((own_cost, inverse))
    first_of_group = np.ones(num_tokens, dtype=bool)
    first_of_group[1:] = inverse[order][1:] != inverse[order][:-1]
    movers = order[~first_of_group]
    taken = {row.tobytes() for row in codes}
    for token in movers:
        increase = np.stack(
            [distances[k][token] - distances[k][token, codes[token, k]] for k in range(num_tables)]
        )  # (K, num_choices): the cost of each single change
        moved = _cheapest_free_tuple(codes[token], increase, taken)
        if moved is None:
            raise ValueError(
                f"`distinct_codes=True`: token {token} finds no free code tuple within two "
                "sub-space changes (the code space is nearly full). Use a larger "
                "`rows_per_table` or `num_tables`."
            )
        taken.add(moved.tobytes())
        codes[token] = moved
    return codes


_MAX_PAIR_CANDIDATES = 4_000_000


def _cheapest_free_tuple(code, increase, taken):
    """The cheapest tuple not in `taken` that differs from `code` in one or two places."""
    num_tables, num_choices = increase.shape
    for flat in np.argsort(increase, axis=None, kind="stable"):
        table, choice = divmod(int(flat), num_choices)
        candidate = code.copy()
        candidate[table] = choice
        if candidate.tobytes() not in taken:
            return candidate
    # Every single change is taken (a crowded region of a nearly full space):
    # try pairs, over each table's cheapest choices when there are many.
    keep = min(num_choices, max(2, int(np.sqrt(_MAX_PAIR_CANDIDATES / num_tables**2))))
    cheapest = np.argsort(increase, axis=1)[:, :keep]
    pairs = []
    for first in range(num_tables):
        for second in range(first + 1, num_tables):
            cost = (
                increase[first, cheapest[first]][:, None]
                + increase[second, cheapest[second]][None, :]
            )
            pairs.append((first, second, cost))
    costs = np.concatenate([cost.reshape(-1) for _, _, cost in pairs])
    block = keep * keep
    for flat in np.argsort(costs, kind="stable"):
        first, second, _ = pairs[int(flat) // block]
        row, column = divmod(int(flat) % block, keep)
        candidate = code.copy()
        candidate[first] = cheapest[first, row]
        candidate[second] = cheapest[second, column]
        if candidate.tobytes() not in taken:
            return candidate
    return None


def product_codes(
    table,
    num_tables,
    rows_per_table=DEFAULT_ROWS_PER_TABLE,
    token_weights=None,
    reserved_ids=(),
    seed=0,
    distinct_codes=False,
    verbose=False,
    max_iterations=30,
    max_points_per_center=256,
):
    """Codes `(V, num_tables)` by k-means in each sub-space of a pretrained table.

    Args:
        table: float array `(V, width)`, the pretrained embedding table.
        num_tables: K, the number of sub-spaces (column chunks of the layer's
            sub-widths: widths differ by at most 1, the first ones wider).
        rows_per_table: M, centroids per sub-space. Defaults to 256 (one
            byte per code; 16 or fewer: packable to half a byte).
        token_weights: optional non-negative `(V,)` weight of each token,
            e.g. `token_weights(...)` from how often tokens occur in real
            text: centroids move toward heavy tokens (weighted k-means).
            `None` weighs every token alike.
        reserved_ids: ids that get their own rows `(j, ..., j)` in every table
            (rebuilt exactly); ordinary ids use rows `[R, M)`.
        seed: makes the result deterministic.
        distinct_codes: give every ordinary token a code tuple of its own (needed
            when tied logits must tell every token apart), moving colliding
            tokens to their next-nearest free centroid in one sub-space.
        verbose: show a progress bar over the sub-spaces.
        max_iterations: Lloyd iterations per sub-space.
        max_points_per_center: centroids are fitted on a random sample of at
            most this many tokens per centroid (every token is then coded
            against them), so millions of ids take seconds per sub-space
            (faiss' default, 256). All tokens are used when they fit.

    Returns:
        int64 array `(V, num_tables)`, every code `< rows_per_table`.

    Example:
    >>> table = np.random.default_rng(0).normal(size=(1000, 32)).astype("float32")
    >>> codes = product_codes(table, num_tables=8, rows_per_table=16)
    >>> codes.shape, int(codes.max()) < 16
    ((1000, 8), True)
    """
    table = check_embedding_table(table)
    num_ids, width = table.shape
    num_tables = check_positive_int("num_tables", num_tables)
    if num_tables > width:
        raise ValueError(
            "`num_tables` cannot exceed the table's width (each sub-space needs at "
            f"least one column). Received: num_tables={num_tables}, width={width}"
        )
    rows_per_table = check_rows_limit(check_positive_int("rows_per_table", rows_per_table))
    reserved = check_reserved_ids(reserved_ids, num_ids)
    distinct = check_bool("distinct_codes", distinct_codes)
    max_iterations = check_positive_int("max_iterations", max_iterations)
    max_points_per_center = check_positive_int("max_points_per_center", max_points_per_center)
    seed = check_seed(seed)
    weights = None if token_weights is None else check_token_weights(token_weights, num_ids, "token_weights")
    num_reserved = len(reserved)
    num_choices = rows_per_table - num_reserved
    if num_choices < 1:
        raise ValueError(
            f"`rows_per_table={rows_per_table}` leaves no row for ordinary tokens "
            f"after the {num_reserved} reserved ids (each owns a row of every table). "
            f"Use rows_per_table > {num_reserved}."
        )
    ordinary = np.setdiff1d(np.arange(num_ids), np.asarray(reserved, dtype=np.int64))
    if distinct and num_choices**num_tables < ordinary.size:
        raise ValueError(
            f"`distinct_codes=True` needs {ordinary.size} distinct code tuples, but "
            f"{num_tables} tables of {num_choices} ordinary rows "
            f"(rows_per_table={rows_per_table} minus {num_reserved} reserved) give "
            f"{num_choices**num_tables}. Use a larger `rows_per_table` or `num_tables`."
        )

    if weights is not None and not weights[ordinary].any():
        raise ValueError(
            "`token_weights` are zero for every ordinary (not reserved) id: nothing to "
            "cluster toward. Give the tokens that matter a positive weight."
        )
    rng = np.random.default_rng(seed)
    # Zero-weight tokens pull no centroid: only the others are fitted.
    fitted = ordinary if weights is None else ordinary[weights[ordinary] > 0]
    if fitted.size > max_points_per_center * num_choices:
        fitted = np.sort(rng.choice(fitted, max_points_per_center * num_choices, replace=False))
    fitted_weights = None if weights is None else weights[fitted]
    local = np.zeros((ordinary.size, num_tables), dtype=np.int64)
    distances = []
    progress = keras.utils.Progbar(num_tables, verbose=1 if verbose else 0, unit_name="sub-space")
    start = 0
    for k, chunk_width in enumerate(sub_widths(width, num_tables)):
        columns = slice(start, start + chunk_width)
        start += chunk_width
        centers = kmeans_centers(
            table[fitted, columns], num_choices, int(rng.integers(2**31)), max_iterations,
            fitted_weights,
        )
        chunk = table[ordinary, columns]
        # scikit-learn works in chunks: memory stays bounded on a 2M-id table.
        local[:, k] = pairwise_distances_argmin(chunk, centers)
        if distinct:  # (tokens, M) per sub-space: kept only when needed
            distances.append(euclidean_distances(chunk, centers, squared=True))
        progress.update(k + 1)
    if distinct:
        local = _make_distinct(local, distances, num_choices)

    codes = np.empty((num_ids, num_tables), dtype=np.int64)
    codes[ordinary] = num_reserved + local
    codes[list(reserved)] = np.arange(num_reserved)[:, None]
    return codes


def shared_code_tokens(codes):
    """How many ids share their code tuple with at least one other id.

    Example:
    >>> shared_code_tokens(np.array([[0, 1], [0, 1], [2, 3]]))
    2
    """
    _, inverse, counts = np.unique(
        np.asarray(codes), axis=0, return_inverse=True, return_counts=True
    )
    return int(np.sum(counts[inverse.reshape(-1)] > 1))
