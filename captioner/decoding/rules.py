"""Rules on each step's next-token log-probabilities (the logits-processor pattern): small objects
the one search applies, in order, to the (rows, V) log-probabilities before choosing candidates.

    rules = [NoRepeatNGram(3), TokenBonus(bonus), BanTokens([PAD_ID, UNK_ID])]
    beam_search(step_fn, state, batch, settings, rules=rules)

A rule is ``rule(log_probs, view) -> log_probs`` with ``view`` a :class:`StepView` of the rows
being extended this step: ``step`` (scalar int32), ``history()`` (rows, T) the tokens each row
generated so far (gathered on first use), ``inputs`` (rows,) the input each row belongs to, and
``vocab_size`` V. ``check(settings)`` runs once before the search (a rule that can never be met
says so there). Each is tested alone in tests/decoding/test_rules.py.
"""

from __future__ import annotations

import tensorflow as tf

_NEG_INF = float("-inf")


class StepView:
    """What a rule may read of the rows being extended (see the module docstring)."""

    def __init__(self, step, token_hist, live_rows, inputs, vocab_size):
        self.step, self.inputs, self.vocab_size = step, inputs, vocab_size
        self._token_hist, self._live_rows, self._history = token_hist, live_rows, None

    def history(self):
        """(rows, T) int32: the tokens each row generated so far (pad after the step)."""
        if self._history is None:
            self._history = (self._token_hist if self._live_rows is None
                             else tf.gather(self._token_hist, self._live_rows))
        return self._history


class Rule:
    def check(self, settings):
        """Raise ValueError before the search when the rule cannot work with `settings`."""

    def __call__(self, log_probs, view):
        raise NotImplementedError


def repeated_ngram_bans(history, step, n, vocab_size):
    """(M, V) float32: -inf at each token that would complete an n-gram already in the first
    ``step`` columns of ``history`` (M, T) (the tokens generated so far), 0 elsewhere."""
    T = history.shape[1]
    rows = tf.shape(history)[0]
    if T is None:  # max_length is a tensor (an exported signature's input)
        width = tf.maximum(tf.shape(history)[1] - n + 1, 0)
    else:
        width = T - n + 1  # n-grams that fit in T columns
        if width <= 0:
            return tf.zeros([rows, vocab_size], tf.float32)
    # the n-gram starting at column j is complete when its last column j + n - 1 < step
    match = tf.broadcast_to(tf.range(width)[None, :] + (n - 1) < step, [rows, width])  # (M, W)
    for k in range(n - 1):  # its first n-1 tokens equal the last n-1 generated
        last = tf.gather(history, tf.maximum(step - (n - 1) + k, 0), axis=1)  # (M,)
        match = match & tf.equal(history[:, k:k + width], last[:, None])
    at = tf.cast(tf.where(match), tf.int32)  # (P, 2): (row, j)
    banned = tf.gather_nd(history[:, n - 1:], at)  # (P,) the token that completed each
    return tf.tensor_scatter_nd_update(tf.zeros([rows, vocab_size], tf.float32),
                                       tf.stack([at[:, 0], banned], 1), tf.fill(tf.shape(banned), _NEG_INF))


class NoRepeatNGram(Rule):
    """n > 0 (Paulus et al. 2018's trigram blocking for n = 3): a token that would complete an n-gram
    the row already holds gets -inf, so no hypothesis repeats an n-gram (n = 1: no token twice).
    ``<start>`` is not part of them."""

    def __init__(self, n):
        self.n = int(n)
        if self.n < 1:
            raise ValueError(f"no_repeat_ngram must be >= 1 for the rule (0: no rule), got {n}")

    def __call__(self, log_probs, view):
        return log_probs + repeated_ngram_bans(view.history(), view.step, self.n, view.vocab_size)


class TokenBonus(Rule):
    """A soft lexical constraint per input (object tags, :mod:`captioner.tagging`): ``bonus[b, v]``
    (B, V) is added to the log-probability of token v in every row of input b that does not hold v
    yet (once it does the bonus is gone: no word is pushed twice)."""

    def __init__(self, bonus):
        self.bonus = bonus

    def __call__(self, log_probs, view):
        held = tf.reduce_max(tf.one_hot(view.history(), view.vocab_size, dtype=tf.float32), axis=1)  # (M, V)
        return log_probs + tf.gather(tf.cast(self.bonus, tf.float32), view.inputs) * (1.0 - held)


class BanTokens(Rule):
    """Token ids never generated: -inf at every step (e.g. ``<pad>``, ``<unk>``, ``<start>``, a
    style token). ``end_id`` cannot be banned. The frozen ``pad_id`` continuation of a finished
    hypothesis is the search's own and not affected."""

    def __init__(self, ids):
        self.ids = sorted({int(i) for i in ids})
        if any(i < 0 for i in self.ids):
            raise ValueError(f"banned_ids must be token ids >= 0, got {self.ids}")

    def check(self, settings):
        if settings.end_id in self.ids:
            raise ValueError(f"end_id {settings.end_id} cannot be banned: no hypothesis could finish")

    def __call__(self, log_probs, view):
        if not self.ids:
            return log_probs
        # + (V,): -inf at the banned ids, 0 elsewhere (x + 0 is x exactly)
        return log_probs + tf.scatter_nd([[i] for i in self.ids], tf.fill([len(self.ids)], _NEG_INF),
                                         [view.vocab_size])


def standard_rules(no_repeat_ngram=0, token_bonus=None, banned_ids=()):
    """The rules the Generator applies, in the search's order: n-gram blocking, the token bonus,
    banned ids (each only when asked for)."""
    rules = []
    if int(no_repeat_ngram) < 0:
        raise ValueError(f"no_repeat_ngram must be >= 0, got {no_repeat_ngram}")
    if int(no_repeat_ngram):
        rules.append(NoRepeatNGram(no_repeat_ngram))
    if token_bonus is not None:
        rules.append(TokenBonus(token_bonus))
    if banned_ids:
        rules.append(BanTokens(banned_ids))
    return rules
