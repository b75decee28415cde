"""Cross-entropy over time and the whole models' gradients, loss to every parameter and input."""

import numpy as np
import pytest

from captioner.reference import (
    cross_entropy_over_time,
    gradient_check,
    lstm_loss_gradients,
    rnn_loss_gradients,
)

N_X, N_A, N_Y, M, T_X = 3, 4, 5, 3, 4
TOLERANCE = 1e-6
MASK = np.array([[1, 1, 1, 1], [1, 1, 0, 0], [1, 1, 1, 0]], float)  # padded sequences


def test_uniform_prediction_costs_log_n_per_step():
    y = np.full((N_Y, M, T_X), 1.0 / N_Y)
    labels = np.zeros((M, T_X), int)
    assert cross_entropy_over_time(y, labels) == pytest.approx(T_X * np.log(N_Y))
    # the mask drops steps; the average is still over the m examples
    assert cross_entropy_over_time(y, labels, MASK) == pytest.approx(MASK.sum() / M * np.log(N_Y))


def test_hand_case():
    y = np.array([[[0.5, 0.9]], [[0.25, 0.1]], [[0.25, 0.0]]])  # (3, 1, 2)
    labels = np.array([[1, 0]])
    assert cross_entropy_over_time(y, labels) == pytest.approx(-np.log(0.25) - np.log(0.9))


def _rnn(rng):
    return {"Wax": rng.standard_normal((N_A, N_X)), "Waa": rng.standard_normal((N_A, N_A)) * 0.5,
            "ba": rng.standard_normal((N_A, 1)), "Wya": rng.standard_normal((N_Y, N_A)),
            "by": rng.standard_normal((N_Y, 1))}


def _lstm(rng):
    p = {}
    for g in "fico":
        p[f"W{g}"] = rng.standard_normal((N_A, N_A + N_X))
        p[f"b{g}"] = rng.standard_normal((N_A, 1))
    p["Wy"], p["by"] = rng.standard_normal((N_Y, N_A)), rng.standard_normal((N_Y, 1))
    return p


@pytest.mark.parametrize("mask", [None, MASK], ids=["all-steps", "masked"])
def test_rnn_loss_gradients(mask):
    rng = np.random.default_rng(0)
    p = _rnn(rng)
    x, a0 = rng.standard_normal((N_X, M, T_X)), rng.standard_normal((N_A, M))
    labels = rng.integers(0, N_Y, size=(M, T_X))
    loss, grads, a = rnn_loss_gradients(x, labels, a0, p, mask)
    assert a.shape == (N_A, M, T_X) and loss > 0

    arrays = {**p, "x": x, "a0": a0}
    errors = gradient_check(lambda: rnn_loss_gradients(x, labels, a0, p, mask)[0], arrays,
                            {name: grads["d" + name] for name in arrays})
    print("rnn loss relative errors:", errors)
    assert max(errors.values()) < TOLERANCE, errors


@pytest.mark.parametrize("mask", [None, MASK], ids=["all-steps", "masked"])
def test_lstm_loss_gradients(mask):
    rng = np.random.default_rng(1)
    p = _lstm(rng)
    x = rng.standard_normal((N_X, M, T_X))
    a0, c0 = rng.standard_normal((N_A, M)), rng.standard_normal((N_A, M))
    labels = rng.integers(0, N_Y, size=(M, T_X))
    _, grads, _ = lstm_loss_gradients(x, labels, a0, p, c0, mask)

    arrays = {**p, "x": x, "a0": a0, "c0": c0}
    errors = gradient_check(lambda: lstm_loss_gradients(x, labels, a0, p, c0, mask)[0], arrays,
                            {name: grads["d" + name] for name in arrays})
    print("lstm loss relative errors:", errors)
    assert max(errors.values()) < TOLERANCE, errors
