"""Algorithm 2 of k-sub-embedding: codes from recursive k-means on a pretrained table.

Level 1 clusters every ordinary token into the table-0 rows; level k clusters
each group of tokens that share a code prefix into at most M groups; the last
level gives the members of each group distinct codes, drawn without
replacement (the paper's "random number among M candidates" with replacement
can give two tokens the same code). Tokens that are close in the pretrained
space therefore share code prefixes, i.e. sub-vectors.

Capacity: a cluster chosen at level k must hold at most `M^(K-k)` tokens, or
its members cannot all get distinct codes below it. `balanced=True` (the
paper's best variant) caps every cluster at `ceil(n / M)` members -- equal
sizes -- which always fits. `balanced=False` keeps plain k-means clusters and
only moves the members of overflowing clusters to the nearest cluster with
room, so it too always yields valid codes.
"""

import math

import keras
import numpy as np
from sklearn.cluster import KMeans
from sklearn.metrics.pairwise import euclidean_distances

from keras_subembed.assignment.code_space import check_rows_per_table
from keras_subembed.checks import check_bool
from keras_subembed.checks import check_choice
from keras_subembed.checks import check_positive_int
from keras_subembed.checks import check_seed
from keras_subembed.assignment.validation import check_reserved_ids


def capacitated_assignment(distances, capacity):
    """Assign each point to a cluster, nearest first, no cluster above `capacity`.

    `distances` is `(points, clusters)`. In rounds, every unassigned point
    proposes to its nearest cluster that still has room, and each cluster
    accepts its closest proposers up to its room; full clusters drop out.
    Every round fills at least one cluster or places every point, so it ends
    within `clusters` rounds. Requires `points <= clusters * capacity`.
    """
    num_points, num_clusters = distances.shape
    if num_points > num_clusters * capacity:
        raise ValueError(
            f"{num_points} points do not fit in {num_clusters} clusters of "
            f"capacity {capacity}."
        )
    labels = np.full(num_points, -1, dtype=np.int64)
    room = np.full(num_clusters, capacity, dtype=np.int64)
    pending = np.arange(num_points)
    while pending.size:
        open_clusters = np.flatnonzero(room > 0)
        candidate = distances[np.ix_(pending, open_clusters)]
        nearest = candidate.argmin(axis=1)
        choice = open_clusters[nearest]
        distance = candidate[np.arange(pending.size), nearest]
        order = np.lexsort((distance, choice))
        sorted_choice = choice[order]
        group_start = np.searchsorted(sorted_choice, sorted_choice, side="left")
        rank = np.arange(order.size) - group_start
        accepted = order[rank < room[sorted_choice]]
        labels[pending[accepted]] = choice[accepted]
        room -= np.bincount(choice[accepted], minlength=num_clusters)
        still_pending = np.ones(pending.size, dtype=bool)
        still_pending[accepted] = False
        pending = pending[still_pending]
    return labels


def _cluster(points, num_clusters, capacity, balanced, refinements, random_state):
    """Labels in `[0, num_clusters)` with at most `capacity` points per label."""
    num_points = points.shape[0]
    if num_points <= num_clusters:
        # Too few points to cluster: one point per cluster.
        return np.arange(num_points)
    kmeans = KMeans(num_clusters, n_init=1, max_iter=50, random_state=random_state)
    labels = kmeans.fit_predict(points)
    centers = kmeans.cluster_centers_
    if balanced:
        capacity = min(capacity, math.ceil(num_points / num_clusters))
        rounds = refinements
    else:
        if np.bincount(labels, minlength=num_clusters).max() <= capacity:
            return labels
        rounds = 0
    labels = capacitated_assignment(euclidean_distances(points, centers, squared=True), capacity)
    for _ in range(rounds):
        centers = np.stack(
            [
                points[labels == c].mean(axis=0) if np.any(labels == c) else centers[c]
                for c in range(num_clusters)
            ]
        )
        labels = capacitated_assignment(
            euclidean_distances(points, centers, squared=True), capacity)
    return labels


# A distance |a - b|^2 is at most 4 * max |row|^2, and sums of many of them
# must stay finite in float32 (max 3.4e38).
MAX_SQUARED_NORM = 1e30


def check_embedding_table(embeddings, name="embeddings"):
    """A finite 2-D float table as float32, or `ValueError` saying what is wrong."""
    array = np.asarray(embeddings)
    if array.ndim != 2:
        raise ValueError(
            f"`{name}` must be a 2-D (vocabulary, width) array. "
            f"Received shape {array.shape}."
        )
    # ml_dtypes' bfloat16 / float8 (a JAX or safetensors table) are floats
    # that NumPy does not count as such.
    if not (np.issubdtype(array.dtype, np.floating) or array.dtype.name.startswith(
            ("bfloat", "float"))):
        raise ValueError(
            f"`{name}` must hold floating-point values. Received dtype {array.dtype}."
        )
    array = array.astype(np.float32)
    bad_rows = np.flatnonzero(~np.isfinite(array).all(axis=1))
    if bad_rows.size:
        raise ValueError(
            f"`{name}` has NaN or infinite values in rows "
            f"{bad_rows[:5].tolist()}{' and more' if bad_rows.size > 5 else ''}."
        )
    # k-means and least squares square the values in float32: a row whose
    # squared norm overflows gives infinite distances and garbage codes.
    squared = np.sum(np.square(array, dtype=np.float64), axis=1)
    big_rows = np.flatnonzero(squared > MAX_SQUARED_NORM)
    if big_rows.size:
        raise ValueError(
            f"`{name}` has values too large to compare in float32 (a squared norm above "
            f"{MAX_SQUARED_NORM:.1e}, largest |value| {np.max(np.abs(array)):.3g}) in rows "
            f"{big_rows[:5].tolist()}{' and more' if big_rows.size > 5 else ''}: rescale it."
        )
    return array


def clustered_codes(
    table,
    num_tables,
    rows_per_table=None,
    reserved_ids=(),
    seed=0,
    verbose=False,
    balanced=True,
    metric="cosine",
    refinements=2,
):
    """Codes `(V, num_tables)` by recursive k-means on a pretrained table.

    Args:
        table: float array `(V, width)`, the pretrained embedding table.
        num_tables: K.
        rows_per_table: M. Defaults to the smallest that fits V ids.
        reserved_ids: ids that get reserved codes (see `code_space`); they
            are left out of the clustering.
        seed: makes the result deterministic.
        verbose: show a progress bar per level.
        balanced: equal-size clusters (capacity `ceil(n / M)` at each level).
        metric: `"cosine"` (rows are L2-normalised first) or `"euclidean"`.
        refinements: rounds of (re-centre, re-assign) after the balanced
            assignment.

    Returns:
        int64 array `(V, num_tables)`; every id has a distinct code tuple and
        every code is `< rows_per_table`.

    Example:
    >>> table = np.random.default_rng(0).normal(size=(1000, 16))
    >>> clustered_codes(table, num_tables=2, rows_per_table=40).shape
    (1000, 2)
    """
    table = check_embedding_table(table)
    num_ids = table.shape[0]
    num_tables = check_positive_int("num_tables", num_tables)
    seed = check_seed(seed)
    metric = check_choice("metric", metric, ("cosine", "euclidean"))
    balanced = check_bool("balanced", balanced)
    reserved = check_reserved_ids(reserved_ids, num_ids)
    num_reserved = len(reserved)
    rows_per_table = check_rows_per_table(
        rows_per_table, num_ids, num_tables, num_reserved
    )
    if metric == "cosine":
        norms = np.linalg.norm(table, axis=1, keepdims=True)
        table = table / np.maximum(norms, 1e-12)

    rng = np.random.default_rng(seed)
    codes = np.zeros((num_ids, num_tables), dtype=np.int64)
    codes[list(reserved)] = np.arange(num_reserved)[:, None]
    ordinary = np.setdiff1d(np.arange(num_ids), reserved)
    groups = [ordinary]
    for level in range(num_tables):
        offset = num_reserved if level == 0 else 0
        choices = rows_per_table - offset
        last = level == num_tables - 1
        below = rows_per_table ** (num_tables - 1 - level)  # capacity under a code
        progress = keras.utils.Progbar(
            len(groups), verbose=1 if verbose else 0, unit_name="group"
        )
        if verbose:
            print(f"level {level + 1}/{num_tables}: {len(groups)} groups")
        next_groups = []
        for index, members in enumerate(groups):
            if last:
                labels = rng.permutation(choices)[: members.size]
            else:
                labels = _cluster(
                    table[members],
                    choices,
                    below,
                    balanced,
                    refinements,
                    random_state=int(rng.integers(2**31 - 1)),
                )
            codes[members, level] = offset + labels
            if not last:
                next_groups += [members[labels == c] for c in np.unique(labels)]
            progress.update(index + 1)
        groups = next_groups
    return codes
