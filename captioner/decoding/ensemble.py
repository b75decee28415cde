"""Several trained decoders decoded as one, inside the one beam search.

    ensemble = EnsembleDecoder([(model_a.decoder, model_a.encode), (model_b.decoder, model_b.encode)])
    generator = Generator(ensemble, ensemble.encode)      # the one Generator, the one beam search

Each member keeps its own encoder, memory and recurrent state; at every step each member scores
the next token from the hypothesis so far, and the scores are combined:

* ``"product"`` (the default): a product of experts, the normalized geometric mean of the
  members' distributions, ``log_softmax(mean_k log p_k)``: what NMT ensembles usually decode with
  (a token must be likely under every member);
* ``"mixture"``: the arithmetic mean of the distributions, ``logsumexp_k(log p_k) - log K``.

The members must share the target vocabulary (their log-probabilities are over the same ids); their
sizes may differ. The attention returned is the members' mean when they attend over the same
positions (the same source tokens for translators, the same grid for captioners); members that
attend over different positions (captioners on different backbones: a 9x9 and a 7x7 grid) take
their own inputs (``encode`` routes them) and return one member's attention (``attention_from``).
``EnsembleDecoder`` has the decoder interface the Generator uses (``prepare`` and ``step``) and
an ``encode`` for it, so greedy, beam search, sampling and every decoding rule work unchanged.
"""

from __future__ import annotations

import math

import tensorflow as tf

COMBINES = ("product", "mixture")


def combine_log_probs(log_probs, combine="product"):
    """log_probs (K, N, V) of K members -> (N, V) log-probabilities of the ensemble."""
    if combine == "product":
        return tf.nn.log_softmax(tf.reduce_mean(log_probs, 0), -1)
    if combine == "mixture":
        return tf.reduce_logsumexp(log_probs, 0) - math.log(int(log_probs.shape[0]))
    raise ValueError(f"combine must be one of {COMBINES}, got {combine!r}")


class EnsembleDecoder:
    """``members``: [(decoder, encode)] as a single model's Generator takes them. ``attention_from``:
    ``"mean"`` (the members' mean attention) or the index of the member whose attention is returned
    (members over different positions)."""

    def __init__(self, members, combine="product", attention_from="mean"):
        if not members:
            raise ValueError("an ensemble needs at least one member")
        if combine not in COMBINES:
            raise ValueError(f"combine must be one of {COMBINES}, got {combine!r}")
        if attention_from != "mean" and not (isinstance(attention_from, int) and 0 <= attention_from < len(members)):
            raise ValueError(f"attention_from must be 'mean' or a member index < {len(members)}, got {attention_from!r}")
        self.members = list(members)
        self.combine = combine
        self.attention_from = attention_from

    def encode(self, *inputs):
        """Every member's encoding of the same inputs. The Generator reads the first member's
        annotations and mask for the batch and attention sizes; the rest travels to
        :meth:`prepare` as the "initial state"."""
        encoded = [encode(*inputs) for _, encode in self.members]
        if any(len(e) > 3 for e in encoded):
            raise ValueError("ensembles of models with start tokens (prompted language models) are not supported")
        return encoded[0][0], encoded[0][1], tuple(tuple(e[:3]) for e in encoded)

    def prepare(self, annotations, mask, initial_state):
        prepared = [decoder.prepare(a, m, s) for (decoder, _), (a, m, s) in zip(self.members, initial_state)]
        return tuple(p[0] for p in prepared), tuple(p[1] for p in prepared)  # memories, states

    def step(self, tokens, state, memory):
        """tokens (N,) -> ensemble log-probs (N, V), every member's new state, mean attention (N, R)."""
        outs = [decoder.step(tokens, s, m) for (decoder, _), s, m in zip(self.members, state, memory)]
        log_probs = combine_log_probs(tf.stack([tf.cast(o[0], tf.float32) for o in outs]), self.combine)  # (N, V)
        if self.attention_from == "mean":
            attention = tf.add_n([tf.cast(o[2], tf.float32) for o in outs]) / float(len(outs))  # (N, R)
        else:
            attention = tf.cast(outs[self.attention_from][2], tf.float32)  # (N, R of that member)
        return log_probs, tuple(o[1] for o in outs), attention
