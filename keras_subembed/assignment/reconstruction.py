"""Least-squares sub-tables for given codes, and how well they rebuild a table."""

import numpy as np

from keras_subembed.assignment.clustered import check_embedding_table
from keras_subembed.assignment.validation import check_token_weights
from keras_subembed.checks import check_positive_int


def least_squares_sub_tables(table, codes, rows_per_table, sub_widths, token_weights=None):
    """Sub-tables that best rebuild `table` (in squared error) from `codes`.

    With codes fixed, each sub-table row is fitted independently: row r of
    table k is the mean of column chunk k over the tokens whose code k is r,
    weighted by `token_weights` (one non-negative weight per token) when given, so
    the error that counts is the heavy tokens'. A row whose tokens all weigh
    zero takes their plain mean; rows no token uses are zeros.
    """
    table = check_embedding_table(table, name="table")
    rows_per_table = check_positive_int("rows_per_table", rows_per_table)
    weights = (np.ones(len(codes)) if token_weights is None
               else check_token_weights(token_weights, len(codes), "token_weights"))
    boundaries = np.concatenate([[0], np.cumsum(sub_widths)])
    tables = []
    for k, width in enumerate(sub_widths):
        chunk = table[:, boundaries[k] : boundaries[k + 1]].astype(np.float64)
        tables.append(
            np.where(
                (_row_mass(codes[:, k], weights, rows_per_table) > 0)[:, None],
                _row_means(chunk, codes[:, k], weights, rows_per_table),
                _row_means(chunk, codes[:, k], np.ones(len(codes)), rows_per_table),
            ).astype(np.float32)
        )
    return tables


def _row_mass(rows, weights, num_rows):
    return np.bincount(rows, weights=weights, minlength=num_rows)


def _row_means(chunk, rows, weights, num_rows):
    sums = np.zeros((num_rows, chunk.shape[1]))
    np.add.at(sums, rows, chunk * weights[:, None])
    return sums / np.maximum(_row_mass(rows, weights, num_rows), 1e-300)[:, None]


# Rows `reconstruction_quality` compares at once in float64: memory stays a
# few MB beside the two tables, however many rows they have.
_QUALITY_ROWS = 8192


def reconstruction_quality(original, reconstructed):
    """How close a rebuilt table is to the original: a dict of three figures.

    * `relative_error`: ||R - E||_F / ||E||_F;
    * `mean_cosine`: mean cosine similarity of matching rows;
    * `mse`: mean squared error per element.

    Sums run in float64 over blocks of rows, so no float64 copy of either
    table is made.

    Example:
    >>> table = np.eye(3, dtype="float32")
    >>> reconstruction_quality(table, table)["mean_cosine"]
    1.0
    """
    original, reconstructed = np.asarray(original), np.asarray(reconstructed)
    if original.ndim != 2 or original.shape != reconstructed.shape or not original.size:
        raise ValueError(
            "`original` and `reconstructed` must be non-empty 2-D tables of one shape. "
            f"Received: original.shape={original.shape}, "
            f"reconstructed.shape={reconstructed.shape}"
        )
    squared_error = squared_norm = cosine_sum = 0.0
    for start in range(0, len(original), _QUALITY_ROWS):
        rows = slice(start, start + _QUALITY_ROWS)
        a = original[rows].astype(np.float64)
        b = reconstructed[rows].astype(np.float64)
        for name, chunk in (("original", a), ("reconstructed", b)):
            if not np.all(np.isfinite(chunk)):
                raise ValueError(f"`{name}` must hold finite numbers; row "
                                 f"{start + int(np.argwhere(~np.isfinite(chunk))[0][0])} "
                                 "has a NaN or infinite value.")
        norms = np.sqrt(np.einsum("ij,ij->i", a, a) * np.einsum("ij,ij->i", b, b))
        cosine_sum += float(np.sum(np.einsum("ij,ij->i", a, b) / np.maximum(norms, 1e-12)))
        squared_norm += float(np.einsum("ij,ij->", a, a))
        b -= a
        squared_error += float(np.einsum("ij,ij->", b, b))
    return {
        "relative_error": float(np.sqrt(squared_error) / np.sqrt(squared_norm)),
        "mean_cosine": cosine_sum / len(original),
        "mse": squared_error / original.size,
    }
