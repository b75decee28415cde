"""The two squashing functions the seminar's cells need, written for column batches.

Every array in `captioner.reference` keeps one example per column: a batch of m vectors of
size n is an (n, m) matrix, so a softmax normalises over axis 0 (the rows of one column).
"""

import numpy as np


def sigmoid(z):
    """sigma(z) = 1 / (1 + exp(-z)), elementwise; its derivative is sigma(z) * (1 - sigma(z)).

    Written as two branches so that neither exp() can overflow for large |z|."""
    z = np.asarray(z)
    out = np.empty_like(z, dtype=np.result_type(z, np.float32))
    positive = z >= 0
    out[positive] = 1.0 / (1.0 + np.exp(-z[positive]))
    e = np.exp(z[~positive])  # z < 0 here, so exp(z) < 1
    out[~positive] = e / (1.0 + e)
    return out


def softmax(z):
    """softmax(z)_k = exp(z_k) / sum_j exp(z_j) over axis 0, one distribution per column.

    Subtracting the column maximum first changes nothing mathematically (the factor
    exp(-max) cancels) and keeps exp() from overflowing."""
    e = np.exp(z - np.max(z, axis=0, keepdims=True))
    return e / np.sum(e, axis=0, keepdims=True)
