"""The NumPy LSTM: the step equations, and every gradient against central differences."""

import numpy as np

from captioner.reference import (
    gradient_check,
    initialize_lstm_parameters,
    lstm_backward,
    lstm_cell_backward,
    lstm_cell_forward,
    lstm_forward,
    sigmoid,
)

N_X, N_A, N_Y, M, T_X = 3, 4, 5, 2, 4
TOLERANCE = 1e-6
GATES = ("Wf", "bf", "Wi", "bi", "Wc", "bc", "Wo", "bo")


def _parameters(rng):
    p = {}
    for g in "fico":
        p[f"W{g}"] = rng.standard_normal((N_A, N_A + N_X))
        p[f"b{g}"] = rng.standard_normal((N_A, 1))
    p["Wy"], p["by"] = rng.standard_normal((N_Y, N_A)), rng.standard_normal((N_Y, 1))
    return p


def test_cell_computes_the_equations():
    rng = np.random.default_rng(0)
    p = _parameters(rng)
    xt, a_prev, c_prev = (rng.standard_normal((n, M)) for n in (N_X, N_A, N_A))
    a_next, c_next, yt, cache = lstm_cell_forward(xt, a_prev, c_prev, p)
    for i in range(M):
        v = np.concatenate([a_prev[:, i], xt[:, i]])
        f = sigmoid(p["Wf"] @ v + p["bf"][:, 0])
        u = sigmoid(p["Wi"] @ v + p["bi"][:, 0])
        cc = np.tanh(p["Wc"] @ v + p["bc"][:, 0])
        o = sigmoid(p["Wo"] @ v + p["bo"][:, 0])
        c = f * c_prev[:, i] + u * cc
        np.testing.assert_allclose(c_next[:, i], c)
        np.testing.assert_allclose(a_next[:, i], o * np.tanh(c))
    np.testing.assert_allclose(yt.sum(axis=0), 1.0)
    assert len(cache) == 10


def test_forward_shapes_and_zero_initial_cell():
    rng = np.random.default_rng(1)
    p = _parameters(rng)
    x, a0 = rng.standard_normal((N_X, M, T_X)), rng.standard_normal((N_A, M))
    a, y, c, _ = lstm_forward(x, a0, p)
    assert a.shape == c.shape == (N_A, M, T_X) and y.shape == (N_Y, M, T_X)
    a1, c1, _, _ = lstm_cell_forward(x[:, :, 0], a0, np.zeros((N_A, M)), p)
    np.testing.assert_allclose(a[:, :, 0], a1)
    np.testing.assert_allclose(c[:, :, 0], c1)


def test_cell_gradients():
    """J = sum(Ga * a_next) + sum(Gc * c_next): both outputs of the cell carry a gradient."""
    rng = np.random.default_rng(2)
    p = _parameters(rng)
    xt, a_prev, c_prev = (rng.standard_normal((n, M)) for n in (N_X, N_A, N_A))
    Ga, Gc = rng.standard_normal((N_A, M)), rng.standard_normal((N_A, M))
    _, _, _, cache = lstm_cell_forward(xt, a_prev, c_prev, p)
    grads = lstm_cell_backward(Ga, Gc, cache)

    def J():
        a_next, c_next, _, _ = lstm_cell_forward(xt, a_prev, c_prev, p)
        return np.sum(Ga * a_next) + np.sum(Gc * c_next)

    arrays = {**{k: p[k] for k in GATES}, "xt": xt, "a_prev": a_prev, "c_prev": c_prev}
    analytic = {**{k: grads["d" + k] for k in GATES},
                "xt": grads["dxt"], "a_prev": grads["da_prev"], "c_prev": grads["dc_prev"]}
    errors = gradient_check(J, arrays, analytic)
    print("lstm_cell_backward relative errors:", errors)
    assert max(errors.values()) < TOLERANCE, errors


def test_backward_through_time_gradients():
    rng = np.random.default_rng(3)
    p = _parameters(rng)
    x = rng.standard_normal((N_X, M, T_X))
    a0, c0 = rng.standard_normal((N_A, M)), rng.standard_normal((N_A, M))
    G = rng.standard_normal((N_A, M, T_X))
    _, _, _, caches = lstm_forward(x, a0, p, c0)
    grads = lstm_backward(G, caches)

    def J():
        return np.sum(G * lstm_forward(x, a0, p, c0)[0])

    arrays = {**{k: p[k] for k in GATES}, "x": x, "a0": a0, "c0": c0}
    analytic = {**{k: grads["d" + k] for k in GATES}, "x": grads["dx"], "a0": grads["da0"], "c0": grads["dc0"]}
    errors = gradient_check(J, arrays, analytic)
    print("lstm_backward relative errors:", errors)
    assert max(errors.values()) < TOLERANCE, errors


def test_initialization_remembers_at_first():
    p = initialize_lstm_parameters(N_X, N_A, N_Y, seed=0)
    assert p["Wf"].shape == (N_A, N_A + N_X) and p["Wy"].shape == (N_Y, N_A)
    np.testing.assert_array_equal(p["bf"], 1.0)
    np.testing.assert_array_equal(p["bi"], 0.0)
