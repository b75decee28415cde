"""The NumPy RNN: shapes, the step equations, and every gradient against central differences."""

import numpy as np

from captioner.reference import (
    gradient_check,
    initialize_rnn_parameters,
    rnn_backward,
    rnn_cell_backward,
    rnn_cell_forward,
    rnn_forward,
    softmax,
)

N_X, N_A, N_Y, M, T_X = 3, 5, 4, 2, 4
TOLERANCE = 1e-6


def _parameters(rng):
    # large enough weights that tanh is not linear (a weak check otherwise)
    return {"Wax": rng.standard_normal((N_A, N_X)), "Waa": rng.standard_normal((N_A, N_A)) * 0.5,
            "ba": rng.standard_normal((N_A, 1)), "Wya": rng.standard_normal((N_Y, N_A)),
            "by": rng.standard_normal((N_Y, 1))}


def test_cell_computes_the_equations():
    rng = np.random.default_rng(0)
    p = _parameters(rng)
    xt, a_prev = rng.standard_normal((N_X, M)), rng.standard_normal((N_A, M))
    a_next, yt, cache = rnn_cell_forward(xt, a_prev, p)
    for i in range(M):  # one example at a time, as a student would by hand
        a_i = np.tanh(p["Wax"] @ xt[:, i] + p["Waa"] @ a_prev[:, i] + p["ba"][:, 0])
        z = p["Wya"] @ a_i + p["by"][:, 0]
        np.testing.assert_allclose(a_next[:, i], a_i)
        np.testing.assert_allclose(yt[:, i], np.exp(z) / np.exp(z).sum())
    np.testing.assert_allclose(yt.sum(axis=0), 1.0)
    assert cache[0] is a_next and cache[1] is a_prev and cache[2] is xt


def test_forward_shapes_and_recurrence():
    rng = np.random.default_rng(1)
    p = _parameters(rng)
    x, a0 = rng.standard_normal((N_X, M, T_X)), rng.standard_normal((N_A, M))
    a, y, (caches, x_cached) = rnn_forward(x, a0, p)
    assert a.shape == (N_A, M, T_X) and y.shape == (N_Y, M, T_X) and len(caches) == T_X
    assert x_cached is x
    np.testing.assert_allclose(a[:, :, 2], np.tanh(p["Wax"] @ x[:, :, 2] + p["Waa"] @ a[:, :, 1] + p["ba"]))
    np.testing.assert_allclose(y[:, :, 3], softmax(p["Wya"] @ a[:, :, 3] + p["by"]))


def test_cell_gradients():
    """J = sum(G * a_next) for a fixed random G, so dJ/da_next = G."""
    rng = np.random.default_rng(2)
    p = _parameters(rng)
    xt, a_prev = rng.standard_normal((N_X, M)), rng.standard_normal((N_A, M))
    G = rng.standard_normal((N_A, M))
    _, _, cache = rnn_cell_forward(xt, a_prev, p)
    grads = rnn_cell_backward(G, cache)

    def J():
        return np.sum(G * rnn_cell_forward(xt, a_prev, p)[0])

    errors = gradient_check(J, {"Wax": p["Wax"], "Waa": p["Waa"], "ba": p["ba"], "xt": xt, "a_prev": a_prev},
                            {"Wax": grads["dWax"], "Waa": grads["dWaa"], "ba": grads["dba"],
                             "xt": grads["dxt"], "a_prev": grads["da_prev"]})
    print("rnn_cell_backward relative errors:", errors)
    assert max(errors.values()) < TOLERANCE, errors


def test_backward_through_time_gradients():
    """J = sum(G * a) over all steps: every a<t> gets a gradient from above and from t+1."""
    rng = np.random.default_rng(3)
    p = _parameters(rng)
    x, a0 = rng.standard_normal((N_X, M, T_X)), rng.standard_normal((N_A, M))
    G = rng.standard_normal((N_A, M, T_X))
    _, _, caches = rnn_forward(x, a0, p)
    grads = rnn_backward(G, caches)

    def J():
        return np.sum(G * rnn_forward(x, a0, p)[0])

    errors = gradient_check(J, {"Wax": p["Wax"], "Waa": p["Waa"], "ba": p["ba"], "x": x, "a0": a0},
                            {"Wax": grads["dWax"], "Waa": grads["dWaa"], "ba": grads["dba"],
                             "x": grads["dx"], "a0": grads["da0"]})
    print("rnn_backward relative errors:", errors)
    assert max(errors.values()) < TOLERANCE, errors


def test_gradient_check_catches_a_wrong_backward():
    """Forget tanh' in the backward pass: the check must fail loudly, not by a hair."""
    rng = np.random.default_rng(4)
    p = _parameters(rng)
    xt, a_prev = rng.standard_normal((N_X, M)), rng.standard_normal((N_A, M))
    G = rng.standard_normal((N_A, M))
    wrong_dWax = G @ xt.T  # should be (G * (1 - a_next**2)) @ xt.T
    errors = gradient_check(lambda: np.sum(G * rnn_cell_forward(xt, a_prev, p)[0]),
                            {"Wax": p["Wax"]}, {"Wax": wrong_dWax})
    assert errors["Wax"] > 1e-2


def test_initialization_shapes():
    p = initialize_rnn_parameters(N_X, N_A, N_Y, seed=0)
    assert {k: v.shape for k, v in p.items()} == {
        "Wax": (N_A, N_X), "Waa": (N_A, N_A), "ba": (N_A, 1), "Wya": (N_Y, N_A), "by": (N_Y, 1)}
