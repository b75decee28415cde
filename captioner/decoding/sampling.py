"""Sampling, the decoding strategy beside beam search: the next token is drawn from the model's
distribution instead of taken from the top of it.

It is one rule of the one search (:func:`captioner.decoding.beam_search` with one beam and a
``temperature``): the search's loop, banned ids, frozen finished hypotheses and result are the
same; only how the candidate of each row is chosen changes. A pure function, tested alone:

* ``temperature`` T divides the log-probabilities before the draw (``p_i^(1/T)``, renormalized):
  T < 1 sharpens the distribution, T > 1 flattens it, T -> 0 approaches the argmax and T = 0 is
  the argmax itself (greedy);
* ``top_k`` K > 0 keeps only the K most probable tokens (ties with the K-th kept) before the
  draw; K = 1 is greedy;
* the draw is ``tf.random.stateless_categorical`` keyed by ``(seed, step)``: the same seed, model
  and inputs give the same tokens in any process.
"""

import tensorflow as tf

_NEG_INF = float("-inf")


def check_sampling(temperature, top_k):
    """-> (temperature float >= 0, top_k int >= 0); ValueError naming the bad one."""
    temperature, top_k = float(temperature), int(top_k or 0)
    if not temperature >= 0 or temperature == float("inf"):
        raise ValueError(f"temperature must be a finite number >= 0, got {temperature}")
    if top_k < 0:
        raise ValueError(f"top_k must be >= 0 (0: all tokens), got {top_k}")
    return temperature, top_k


def sample_tokens(log_probs, *, temperature=1.0, top_k=0, seed=(0, 0)):
    """Draw one token per row of ``log_probs`` (N, V) (log-softmaxed, -inf = impossible).

    Returns (chosen log-probabilities (N, 1) float32 under the model's own distribution, not the
    tempered one; tokens (N, 1) int32). ``seed``: two integers (or an int tensor of shape (2,)).
    """
    temperature, top_k = check_sampling(temperature, top_k)
    log_probs = tf.cast(log_probs, tf.float32)  # (N, V)
    logits = log_probs
    if top_k:
        k = tf.minimum(top_k, tf.shape(logits)[-1])
        kth = tf.math.top_k(logits, k=k).values[:, -1:]  # (N, 1) the K-th largest
        logits = tf.where(logits < kth, _NEG_INF, logits)
    if temperature == 0.0:
        tokens = tf.argmax(logits, axis=-1, output_type=tf.int32)[:, None]  # (N, 1)
    else:
        seed = tf.cast(tf.convert_to_tensor(seed), tf.int32)
        tokens = tf.random.stateless_categorical(logits / temperature, 1, seed=seed, dtype=tf.int32)  # (N, 1)
    return tf.gather(log_probs, tokens, batch_dims=1), tokens
