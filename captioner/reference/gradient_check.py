"""Finite-difference gradient checking.

For a scalar function J of an array theta, the central difference

    dJ/dtheta_k  ~  (J(theta + eps e_k) - J(theta - eps e_k)) / (2 eps)

has an error of order eps^2 (the first-order terms of the two Taylor expansions cancel),
against eps for the one-sided difference. In float64 with eps = 1e-6 the truncation error is
~1e-12 and the rounding error ~1e-16 / 1e-6 = 1e-10, so a correct backward pass agrees to far
better than the 1e-6 relative error the tests ask for; a wrong one is off by O(1).

The agreement is measured as

    relative error = ||analytic - numeric|| / (||analytic|| + ||numeric||)

which does not depend on the scale of the gradient.
"""

import numpy as np


def numerical_gradient(J, theta, eps=1e-6):
    """Central differences of J() with respect to every entry of `theta`.

    J takes no argument and reads `theta` (and anything else) itself; `theta` is perturbed
    in place, one entry at a time, and restored exactly afterwards."""
    if theta.dtype != np.float64:
        raise TypeError(f"gradient checks need float64, got {theta.dtype}")
    grad = np.zeros_like(theta)
    for index in np.ndindex(theta.shape):
        original = theta[index]
        theta[index] = original + eps
        J_plus = J()
        theta[index] = original - eps
        J_minus = J()
        theta[index] = original  # restore
        grad[index] = (J_plus - J_minus) / (2.0 * eps)
    return grad


def relative_error(analytic, numeric):
    """||analytic - numeric|| / (||analytic|| + ||numeric||); 0 when both are zero."""
    denominator = np.linalg.norm(analytic) + np.linalg.norm(numeric)
    if denominator == 0.0:
        return 0.0
    return float(np.linalg.norm(analytic - numeric) / denominator)


def gradient_check(J, arrays, analytic, eps=1e-6):
    """Compare analytic gradients with central differences, array by array.

    J: a function of no argument returning the scalar loss, computed from the arrays in
    `arrays` (name -> float64 array, perturbed in place). analytic: name -> dJ/d(array) from
    the backward pass, same shapes. Returns name -> relative error."""
    errors = {}
    for name, theta in arrays.items():
        if analytic[name].shape != theta.shape:
            raise ValueError(f"{name}: gradient shape {analytic[name].shape} != {theta.shape}")
        errors[name] = relative_error(analytic[name], numerical_gradient(J, theta, eps))
    return errors
