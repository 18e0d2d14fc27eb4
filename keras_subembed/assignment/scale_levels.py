"""One byte per token of length: the scale levels of `SubEmbedding(row_scales=True)`."""

import numpy as np
from sklearn.cluster import KMeans

SCALE_LEVELS = 256


def norm_scale_levels(table, rebuilt, reserved_ids=(), token_weights=None, seed=0):
    """`(levels, codes)`: 256 scales and each token's level, so rows keep their norms.

    Token n's ideal scale is `||table[n]|| / ||rebuilt[n]||`; the scales are
    clustered on a log axis (weighted k-means, as the codes are) into 255
    levels, and level 0 is exactly 1.0 for the reserved ids (rebuilt exactly)
    and for rows rebuilt as zero.

    Returns:
        float32 `(256,)` levels and uint8 `(V,)` codes.

    Example:
    >>> table = np.random.default_rng(0).normal(size=(500, 8)).astype("float32")
    >>> levels, codes = norm_scale_levels(table, 0.5 * table)
    >>> float(np.median(levels[codes]))
    2.0
    """
    table = np.asarray(table, dtype=np.float64)
    rebuilt = np.asarray(rebuilt, dtype=np.float64)
    rebuilt_norms = np.linalg.norm(rebuilt, axis=1)
    scalable = rebuilt_norms > 0
    scalable[list(reserved_ids)] = False
    codes = np.zeros(len(table), dtype=np.uint8)
    levels = np.ones(SCALE_LEVELS, dtype=np.float32)
    if not scalable.any():
        return levels, codes
    log_scales = np.log(
        np.maximum(np.linalg.norm(table[scalable], axis=1), 1e-12) / rebuilt_norms[scalable]
    )[:, None]
    num_levels = min(SCALE_LEVELS - 1, len(np.unique(log_scales)))
    model = KMeans(num_levels, n_init=1, random_state=seed).fit(
        log_scales, sample_weight=None if token_weights is None else np.asarray(token_weights)[scalable]
    )
    levels[1 : num_levels + 1] = np.exp(model.cluster_centers_[:, 0])
    codes[scalable] = 1 + model.labels_
    return levels, codes
