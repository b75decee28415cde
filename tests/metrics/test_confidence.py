"""The "don't know" threshold rule on hand-made dev sets."""

import numpy as np
import pytest

from captioner.metrics.confidence import answered_table, choose_min_probability, reliability_bins


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
