"""The penalties of beam search, as small pure functions: length and coverage.

Length penalty: ``score = log_prob_sum / length ** alpha``. ``length`` counts the GENERATED
tokens of a hypothesis INCLUDING its ``<end>`` token and excluding the ``<start>`` token: the
caption ``<start> a cat <end>`` has length 3. A hypothesis is never scored before it holds one
token, so ``length >= 1`` always. ``alpha = 0`` leaves the summed log-probability as it is
(short hypotheses are favoured), ``alpha = 1`` divides by the length (the average
log-probability per token); values in between interpolate.

Coverage penalty (GNMT, Wu et al. 2016, eq. 14): ``beta * sum_j log(min(sum_i a_ij, 1.0))``
over the source positions j, with ``a_ij`` the attention of output step i on position j. It is
ADDED to a score: 0 when every source position got a total weight of at least 1, more negative
the less some position was attended to, so a hypothesis that drops part of the source loses.
(OpenNMT-py's ``coverage_wu`` returns the same quantity with the opposite sign, to subtract.)

Every function takes python numbers (and returns python floats) or tensors (and returns float32
tensors), so the same code scores hand-worked cases in tests and whole beams in a graph;
``coverage_penalty`` also takes NumPy arrays and nested lists (computed in float64).
"""

import numbers

import numpy as np
import tensorflow as tf

# Coverage below this floor counts as this floor: log(0) would make one unattended word -inf.
COVERAGE_FLOOR = 1e-6


def _is_number(x):
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def length_penalty(length, alpha):
    """``length ** alpha``: the divisor of a hypothesis' summed log-probability.

    Args:
        length: number of generated tokens including ``<end>`` (>= 1); int, float or tensor.
        alpha: the exponent; 0 gives 1 (no normalization), 1 gives ``length``.
    """
    if _is_number(length) and _is_number(alpha):
        return float(length) ** float(alpha)
    length = tf.cast(length, tf.float32)
    alpha = tf.cast(alpha, tf.float32)
    return tf.pow(length, alpha)


def normalized_score(log_prob_sum, length, alpha):
    """``log_prob_sum / length ** alpha``: the score beam search ranks hypotheses by."""
    if _is_number(log_prob_sum) and _is_number(length) and _is_number(alpha):
        return float(log_prob_sum) / length_penalty(length, alpha)
    log_prob_sum = tf.cast(log_prob_sum, tf.float32)
    return log_prob_sum / length_penalty(length, alpha)


def coverage_penalty(attention, beta, source_mask=None):
    """GNMT's coverage penalty ``beta * sum_j log(min(sum_i a_ij, 1.0))``, to add to a score.

    Args:
        attention: (..., steps, source) attention weights of the generated steps of one or
            more hypotheses (only real steps: slice or zero the steps after ``<end>``). A
            tensor, or anything NumPy reads (a list of rows, an array).
        beta: the weight (>= 0); 0 turns the penalty off.
        source_mask: optional (..., source) bool/0-1, the real source positions (padding is
            not penalised); None: all.

    Returns:
        (...) penalties <= 0: a python float for one (steps, source) NumPy/list input, a float64
        array for a batch of them, a float32 tensor for a tensor input. Each position's total
        attention is floored at ``COVERAGE_FLOOR``.
    """
    if isinstance(attention, (tf.Tensor, tf.Variable)):
        total = tf.reduce_sum(tf.cast(attention, tf.float32), axis=-2)  # (..., source)
        logs = tf.math.log(tf.clip_by_value(total, COVERAGE_FLOOR, 1.0))
        if source_mask is not None:
            logs = logs * tf.cast(source_mask, tf.float32)
        return tf.cast(beta, tf.float32) * tf.reduce_sum(logs, axis=-1)
    total = np.asarray(attention, np.float64).sum(axis=-2)  # (..., source)
    logs = np.log(np.clip(total, COVERAGE_FLOOR, 1.0))
    if source_mask is not None:
        logs = logs * np.asarray(source_mask, np.float64)
    penalty = float(beta) * logs.sum(axis=-1)
    return float(penalty) if np.ndim(penalty) == 0 else penalty
