"""The "don't know" threshold rule on hand-made dev sets."""

import numpy as np
import pytest

from captioner.metrics.confidence import (answered_table, choose_min_probability, expected_calibration_error,
                                          fit_temperature, negative_log_likelihood, reliability_bins, temper)


def _set(spec):
    """spec: [(probability, questions, right)] -> (top probabilities, correct flags)."""
    p, ok = [], []
    for prob, n, right in spec:
        p += [prob] * n
        ok += [True] * right + [False] * (n - right)
    return np.array(p), np.array(ok)


def test_threshold_is_the_top_of_the_highest_bin_right_less_than_half_the_time():
    # bins: [0.1,0.2) 30 q 5 right; [0.3,0.4) 30 q 12 right (40%); [0.5,0.6) 30 q 20 right; [0.9,1] 30 q 29
    p, ok = _set([(0.15, 30, 5), (0.35, 30, 12), (0.55, 30, 20), (0.95, 30, 29)])
    assert choose_min_probability(p, ok) == pytest.approx(0.4)


def test_small_bins_are_not_trusted_and_a_good_model_answers_everything():
    p, ok = _set([(0.15, 5, 0), (0.55, 30, 20), (0.95, 30, 29)])  # the bad bin has only 5 questions
    assert choose_min_probability(p, ok) == 0.0
    assert choose_min_probability(p, ok, min_count=5) == pytest.approx(0.2)


def test_a_bad_bin_above_a_good_one_moves_the_threshold_up():
    p, ok = _set([(0.15, 30, 20), (0.45, 30, 10), (0.95, 30, 29)])
    assert choose_min_probability(p, ok) == pytest.approx(0.5)


def test_bins_and_answered_table():
    p, ok = _set([(0.15, 4, 1), (1.0, 4, 4)])
    bins = reliability_bins(p, ok)
    assert len(bins) == 10 and bins[1][2:] == (4, 0.25) and bins[-1][2:] == (4, 1.0)  # p = 1 in the last bin
    rows = answered_table(p, ok, [0.0, 0.5, 1.01])
    assert rows[0] == {"min_probability": 0.0, "answered": 1.0, "accuracy_answered": 5 / 8}
    assert rows[1]["answered"] == 0.5 and rows[1]["accuracy_answered"] == 1.0
    assert rows[2]["answered"] == 0.0 and rows[2]["accuracy_answered"] is None


# ---------------------------------------------------------------- calibration (issue 69)


def test_ece_by_hand():
    # two examples at 0.9 (one right), two at 0.6 (both right): |0.5-0.9|*0.5 + |1.0-0.6|*0.5 = 0.4
    p = np.array([[0.9, 0.1], [0.9, 0.1], [0.4, 0.6], [0.4, 0.6]])
    assert expected_calibration_error(p, [0, 1, 1, 1]) == pytest.approx(0.4)
    # a gold answer outside the classes (-1) is never right
    assert expected_calibration_error(p[:1], [-1]) == pytest.approx(0.9)
    with pytest.raises(ValueError):
        expected_calibration_error(p, [0, 1, 2, 1])


def test_temper_is_softmax_of_scaled_logits():
    logits = np.array([[2.0, 0.5, -1.0], [0.0, 3.0, 1.0]])
    p = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    for t in (0.5, 1.0, 2.5):
        want = np.exp(logits / t) / np.exp(logits / t).sum(-1, keepdims=True)
        np.testing.assert_allclose(temper(p, t), want, rtol=1e-9)
    with pytest.raises(ValueError):
        temper(p, 0.0)


def test_fit_temperature_recovers_the_temperature_that_made_the_labels():
    rng = np.random.default_rng(0)
    logits = rng.normal(0, 3, (4000, 5))
    true_t = 2.5  # labels drawn from softmax(logits / 2.5): the raw softmax is over-confident
    q = np.exp(logits / true_t)
    q /= q.sum(-1, keepdims=True)
    labels = np.array([rng.choice(5, p=row) for row in q])
    p = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    t = fit_temperature(p, labels)
    assert t == pytest.approx(true_t, rel=0.1)
    assert negative_log_likelihood(temper(p, t), labels) < negative_log_likelihood(p, labels)
    assert expected_calibration_error(temper(p, t), labels) < 0.03 < expected_calibration_error(p, labels)
    assert (temper(p, t).argmax(-1) == p.argmax(-1)).all()
