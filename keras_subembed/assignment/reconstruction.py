"""Least-squares sub-tables for given codes, and how well they rebuild a table."""

import numpy as np


def least_squares_sub_tables(table, codes, rows_per_table, sub_widths, token_weights=None):
    """Sub-tables that best rebuild `table` (in squared error) from `codes`.

    With codes fixed, each sub-table row is fitted independently: row r of
    table k is the mean of column chunk k over the tokens whose code k is r,
    weighted by `token_weights` (one non-negative weight per token) when given, so
    the error that counts is the heavy tokens'. A row whose tokens all weigh
    zero takes their plain mean; rows no token uses are zeros.
    """
    weights = (np.ones(len(codes)) if token_weights is None
               else np.asarray(token_weights, np.float64))
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


def reconstruction_quality(original, reconstructed):
    """How close a rebuilt table is to the original: a dict of three figures.

    * `relative_error`: ||R - E||_F / ||E||_F;
    * `mean_cosine`: mean cosine similarity of matching rows;
    * `mse`: mean squared error per element.
    """
    original = np.asarray(original, dtype=np.float64)
    reconstructed = np.asarray(reconstructed, dtype=np.float64)
    difference = reconstructed - original
    norms = np.linalg.norm(original, axis=1) * np.linalg.norm(reconstructed, axis=1)
    cosines = np.einsum("ij,ij->i", original, reconstructed) / np.maximum(norms, 1e-12)
    return {
        "relative_error": float(np.linalg.norm(difference) / np.linalg.norm(original)),
        "mean_cosine": float(cosines.mean()),
        "mse": float(np.mean(difference**2)),
    }
