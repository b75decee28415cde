"""Length penalty against hand-worked cases (length counts generated tokens incl. <end>)."""

import math

import numpy as np
import pytest
import tensorflow as tf

from captioner.decoding import length_penalty, normalized_score


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
