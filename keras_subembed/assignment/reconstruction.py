"""Least-squares sub-tables for given codes, and how well they rebuild a table."""

import numpy as np


def least_squares_sub_tables(embeddings, codes, rows_per_table, sub_widths):
    """Sub-tables that best rebuild `embeddings` (in squared error) from `codes`.

    With codes fixed, each sub-table row is fitted independently: row r of
    table k is the mean of column chunk k over the tokens whose code k is r.
    Rows no token uses are zeros (no id looks them up).
    """
    boundaries = np.concatenate([[0], np.cumsum(sub_widths)])
    tables = []
    for k, width in enumerate(sub_widths):
        chunk = embeddings[:, boundaries[k] : boundaries[k + 1]].astype(np.float64)
        sums = np.zeros((rows_per_table, width))
        np.add.at(sums, codes[:, k], chunk)
        counts = np.bincount(codes[:, k], minlength=rows_per_table)[:, None]
        tables.append((sums / np.maximum(counts, 1)).astype(np.float32))
    return tables


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
