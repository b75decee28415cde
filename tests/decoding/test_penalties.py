"""Length and coverage penalties against hand-worked cases (length counts generated tokens
incl. <end>; coverage as OpenNMT-py's coverage_wu, negated: it is added to a score)."""

import math

import numpy as np
import pytest
import tensorflow as tf

from captioner.decoding import coverage_penalty, length_penalty, normalized_score


@pytest.mark.parametrize("alpha, expected", [(0.0, 1.0), (1.0, 4.0), (0.5, 2.0)])
def test_length_4(alpha, expected):
    assert length_penalty(4, alpha) == pytest.approx(expected)
    # the same on tensors (int lengths are cast to float32)
    assert float(length_penalty(tf.constant(4), alpha)) == pytest.approx(expected)
    assert float(length_penalty(tf.constant(4.0), tf.constant(alpha))) == pytest.approx(expected)


def test_python_numbers_give_python_floats():
    assert isinstance(length_penalty(4, 0.5), float)
    assert isinstance(normalized_score(-2.0, 4, 1.0), float)


def test_normalized_score_hand_cases():
    # sum of log-probs -6 over 4 tokens (e.g. "a cat sits <end>")
    assert normalized_score(-6.0, 4, 0.0) == pytest.approx(-6.0)  # no normalization
    assert normalized_score(-6.0, 4, 1.0) == pytest.approx(-1.5)  # average per token
    assert normalized_score(-6.0, 4, 0.5) == pytest.approx(-3.0)  # -6 / sqrt(4)
    # log(0.4) for one token vs log(0.36) over two: alpha decides which is better
    short, long_ = math.log(0.4), math.log(0.36)
    assert normalized_score(short, 1, 0.0) > normalized_score(long_, 2, 0.0)
    assert normalized_score(short, 1, 1.0) < normalized_score(long_, 2, 1.0)


def test_tensors_elementwise():
    sums = tf.constant([[-6.0, -3.0], [-1.0, float("-inf")]])
    lengths = tf.constant([[4, 3], [1, 2]], tf.int32)
    got = normalized_score(sums, lengths, 1.0)
    assert got.dtype == tf.float32
    np.testing.assert_allclose(got.numpy(), [[-1.5, -1.0], [-1.0, float("-inf")]])


# -- coverage penalty (GNMT, Wu et al. 2016): beta * sum_j log(min(sum_i a_ij, 1)) ---------------

def test_coverage_hand_worked():
    # 2 output steps over 3 source words: totals 1.2, 0.5, 0.25 -> log 1 + log .5 + log .25
    attn = [[0.7, 0.3, 0.0], [0.5, 0.2, 0.25]]
    expected = 0.2 * (math.log(0.5) + math.log(0.25))  # -0.4159
    assert coverage_penalty(attn, 0.2) == pytest.approx(expected)
    assert isinstance(coverage_penalty(attn, 0.2), float)
    assert float(coverage_penalty(tf.constant(attn), 0.2)) == pytest.approx(expected, rel=1e-6)


def test_coverage_zero_when_every_word_is_covered_or_beta_is_zero():
    assert coverage_penalty(np.eye(3), 1.0) == 0.0  # each word attended to once
    assert coverage_penalty([[1.0, 1.0], [1.0, 1.0]], 1.0) == 0.0  # more than once: capped at 1
    assert coverage_penalty([[0.5, 0.5]], 0.0) == 0.0


def test_coverage_floor_and_source_mask():
    # word 2 never attended to: floored at 1e-6 instead of log(0) = -inf
    attn = [[1.0, 0.0]]
    assert coverage_penalty(attn, 1.0) == pytest.approx(math.log(1e-6))
    # a masked (padding) position is not penalised
    assert coverage_penalty(attn, 1.0, source_mask=[True, False]) == 0.0
    got = coverage_penalty(tf.constant(attn), 1.0, source_mask=tf.constant([True, False]))
    assert float(got) == 0.0


def test_coverage_batched_numpy_and_tensor_agree():
    rng = np.random.default_rng(0)
    attn = rng.dirichlet(np.ones(4), size=(2, 3, 5))  # (batch 2, beams 3, steps 5, source 4)
    got = coverage_penalty(attn, 0.3)
    assert got.shape == (2, 3)
    for b in range(2):
        for k in range(3):
            assert got[b, k] == pytest.approx(coverage_penalty(attn[b, k], 0.3))
    t = coverage_penalty(tf.constant(attn, tf.float32), 0.3)
    assert t.dtype == tf.float32 and t.shape == (2, 3)
    np.testing.assert_allclose(t.numpy(), got, rtol=1e-5, atol=1e-6)
