"""Length penalty of beam search: ``score = log_prob_sum / length ** alpha``.

``length`` counts the GENERATED tokens of a hypothesis INCLUDING its ``<end>`` token and
excluding the ``<start>`` token: the caption ``<start> a cat <end>`` has length 3. A hypothesis
is never scored before it holds one token, so ``length >= 1`` always.

``alpha = 0`` leaves the summed log-probability as it is (short hypotheses are favoured),
``alpha = 1`` divides by the length (the average log-probability per token); values in
between interpolate.

Both functions take python numbers (and return python floats) or tensors (and return float32
tensors), so the same code scores hand-worked cases in tests and whole beams in a graph.
"""

import numbers

import tensorflow as tf


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
