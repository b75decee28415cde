"""How the one search chooses each step's candidates and survivors (OpenNMT-py's DecodeStrategy):

* :class:`BeamStrategy` (the default): each row's K best tokens are its candidates, each input's K
  best candidates survive (greedy is K = 1);
* :class:`Sampling`: one drawn token per row (``temperature``, ``top_k``, keyed by ``(seed, step)``;
  :mod:`captioner.decoding.sampling`), one beam;
* :class:`Constrained`: hard lexical constraints (Anderson et al. 2017, "Guided Open Vocabulary
  Image Captioning with Constrained Beam Search"), K beams for each subset of constraints met, with
  an optional deadline (module docstring of :mod:`captioner.decoding.beam_search`).

A strategy is asked, in this order: ``rows(beam_size)`` (beams per input; the constrained search
keeps ``beam_size * 2 ** C``), ``start(B, K)`` (the scores the beams start from), then per step
``candidates(log_probs, rows, step)`` -> (log-probabilities, tokens (rows, width), extra or None)
and ``select(candidate sums, penalty, extra, B, K)`` -> (the chosen candidates (B, K), their
sums), and at the end ``finish(scores, order, B, K)`` -> (the output order, extra outputs).
"""

from __future__ import annotations

import tensorflow as tf

from captioner.decoding.sampling import check_sampling, sample_tokens

_NEG_INF = float("-inf")
MAX_CONSTRAINTS = 4  # 2 ** C beams per input and beam: the search grows fast with C


class BeamStrategy:
    """The K best of each beam; each input keeps its K best candidates."""

    def rows(self, beam_size):
        self.K0 = beam_size
        return beam_size

    @property
    def width(self):
        """Candidates per beam and step."""
        return self.K0

    def start(self, B, K):
        """(B, K) the beams' starting sums: only beam 0 is alive, so the first step gives K
        distinct hypotheses."""
        first = tf.where(tf.range(K) == 0, 0.0, _NEG_INF)[None, :]  # (1, K)
        return tf.tile(first, [B, 1])

    def candidates(self, log_probs, rows, step):
        cand_log_probs, cand_tokens = tf.math.top_k(log_probs, k=self.K0)  # (rows, K)
        return cand_log_probs, cand_tokens, None

    def select(self, cand_sums, penalty, extra, B, K):
        _, best = tf.math.top_k(cand_sums / penalty, k=K)  # (B, K) into K*K
        return best, tf.gather(cand_sums, best, batch_dims=1)

    def finish(self, scores, order, B, K):
        return order, {}


class Sampling(BeamStrategy):
    """One hypothesis per input, each step's token drawn (see :mod:`captioner.decoding.sampling`);
    ``log_probs`` are those of the drawn tokens under the model. ``seed``: an int, or a scalar int32
    tensor in [0, 2**31) (a compiled function's input)."""

    def __init__(self, temperature, top_k=0, seed=0):
        self.temperature, self.top_k = check_sampling(temperature, top_k)
        # the draw's key is (seed, step), int32; a scalar tensor seed passes as it is
        self.seed = tf.cast(seed, tf.int32) if tf.is_tensor(seed) else int(seed) % 2**31

    def rows(self, beam_size):
        if beam_size != 1:
            raise ValueError(f"sampling draws one hypothesis per input: beam_size must be 1, got {beam_size}")
        return super().rows(beam_size)

    def candidates(self, log_probs, rows, step):
        cand_log_probs, cand_tokens = sample_tokens(log_probs, temperature=self.temperature, top_k=self.top_k,
                                                    seed=tf.stack([self.seed, step]))  # (rows, 1)
        return cand_log_probs, cand_tokens, None


def constraint_sizes(constraints):
    """(C, D, G = 2 ** C) of a constraints tensor (B, C, D), or (0, 0, 1) for None."""
    if constraints is None:
        return 0, 0, 1
    shape = tf.TensorShape(getattr(constraints, "shape", None) or tf.convert_to_tensor(constraints).shape)
    if shape.rank != 3 or shape[1] is None or shape[2] is None:
        raise ValueError(f"constraints must be (batch, C, D) with C and D known, got shape {shape}")
    C, D = int(shape[1]), int(shape[2])
    if C > MAX_CONSTRAINTS:
        raise ValueError(f"at most {MAX_CONSTRAINTS} constraints per input (2 ** C beams each), got {C}")
    if C and D < 1:
        raise ValueError("each constraint needs at least one token id (D >= 1)")
    return C, D, 2 ** C


def deadline_per_input(constraint_deadline) -> bool:
    """Whether a ``constraint_deadline`` is one per input (a list, array or tensor of rank 1),
    not one int for all."""
    return isinstance(constraint_deadline, (list, tuple)) or getattr(constraint_deadline, "ndim", 0) == 1


def constrained_candidates(log_probs, constraints, group, k, bits, late=None):
    """The candidates of constrained beams (Anderson et al. 2017).

    log_probs (M, V) of M beams; constraints (M, C, D) their input's; group (M,) the subset of
    constraints each has met (a bitmask). Returns log_probs, tokens (M, k + C*D) and the subsets
    (M, C*D) of the C*D forced candidates: first each beam's k best tokens that meet none of its
    unmet constraints (they stay in its subset), then every id of every unmet constraint (-inf where
    the constraint is met or the id is padding), which moves it to ``group | the constraints it meets``.
    late (M,) bool or None: these beams have no staying candidates (their deadline has come).
    """
    V = tf.shape(log_probs)[1]
    M, C, D = tf.shape(constraints)[0], constraints.shape[1], constraints.shape[2]
    hit = tf.reduce_max(tf.one_hot(constraints, V, dtype=tf.int32), axis=2)  # (M, C, V): id v meets c
    unmet = tf.cast(tf.equal(tf.bitwise.bitwise_and(group[:, None], bits[None, :]), 0), tf.int32)  # (M, C)
    meets_unmet = tf.reduce_sum(hit * unmet[:, :, None], axis=1) > 0  # (M, V)
    stay_log_probs, stay_tokens = tf.math.top_k(tf.where(meets_unmet, _NEG_INF, log_probs), k=k)  # (M, k)
    if late is not None:
        stay_log_probs = tf.where(late[:, None], _NEG_INF, stay_log_probs)
    ids = tf.reshape(constraints, [M, C * D])  # (M, C*D)
    valid = (ids >= 0) & tf.reshape(tf.repeat(unmet > 0, D, axis=1), [M, C * D])
    safe = tf.maximum(ids, 0)
    forced = tf.where(valid, tf.gather(log_probs, safe, batch_dims=1), _NEG_INF)  # (M, C*D)
    met_by = tf.reduce_sum(hit * bits[None, :, None], axis=1)  # (M, V): the constraints each id meets
    to_group = tf.bitwise.bitwise_or(group[:, None], tf.gather(met_by, safe, batch_dims=1))  # (M, C*D)
    return (tf.concat([stay_log_probs, forced], 1), tf.concat([stay_tokens, tf.where(valid, ids, 0)], 1),
            to_group)


class Constrained(BeamStrategy):
    """Hard, disjunctive lexical constraints: ``constraints`` int32 (B, C, D), input b must use, for
    each c, one of the ids ``constraints[b, c, :]`` (-1 pads; a constraint of -1 only is absent); C and
    D static (C <= MAX_CONSTRAINTS). ``deadline`` n > 0: a hypothesis meets one of its constraints
    within its first n tokens or dies; 0: anywhere; or int32 (B,): each input's own n. The result
    is ranked by the number of constraints met first, then by score; ``"constraints_met"`` (B, K)
    says how many each meets."""

    def __init__(self, constraints, deadline=0):
        self.C, self.D, self.G = constraint_sizes(constraints)
        self.constraints = constraints
        self.per_input = deadline_per_input(deadline)
        if self.per_input:  # int32 (B,): each input's own deadline
            deadline = tf.reshape(tf.cast(deadline, tf.int32), [-1])
        elif deadline < 0:
            raise ValueError(f"constraint_deadline must be >= 0, got {deadline}")
        else:
            deadline = int(deadline)
        self.deadline = deadline

    def rows(self, beam_size):
        if not isinstance(beam_size, int):
            raise ValueError("constraints need a python int beam_size")
        self.K0 = beam_size
        return beam_size * self.G

    @property
    def width(self):
        return self.K0 + self.C * self.D  # its K0 best tokens and one per constraint id

    def start(self, B, K):
        """Only beam 0 of the subset of the absent constraints (-1 only) is alive at first."""
        C, K0 = self.C, self.K0
        self.K = K
        self.constraints = tf.cast(self.constraints, tf.int32)  # (B, C, D)
        absent = tf.reduce_all(self.constraints < 0, axis=2)  # (B, C)
        self.start_group = tf.reduce_sum(tf.cast(absent, tf.int32) * (2 ** tf.range(C)), axis=1)  # (B,)
        sums = tf.where(tf.range(K)[None, :] == (self.start_group * K0)[:, None], 0.0, _NEG_INF)  # (B, K)
        self.row_group = tf.range(K) // K0  # (K,) the subset each beam position holds
        self.bits = 2 ** tf.range(C)  # (C,)
        return sums

    def candidates(self, log_probs, rows, step):
        """The K0 best that stay in the row's subset, then each id of its unmet constraints."""
        K, G = self.K, self.G
        groups_now = tf.gather(self.row_group, rows % K)  # (rows,)
        late = None
        if self.per_input or self.deadline:  # at the deadline, a beam that met none must meet one now
            starts = tf.gather(self.start_group, rows // K)  # (rows,); G - 1: no constraint at all
            due = tf.gather(self.deadline, rows // K) if self.per_input else self.deadline
            late = (due > 0) & (step >= due - 1) & tf.equal(groups_now, starts) & (starts < G - 1)
        return constrained_candidates(log_probs, tf.gather(self.constraints, rows // K), groups_now, self.K0,
                                      self.bits, late)

    def select(self, cand_sums, penalty, forced_groups, B, K):
        """Each subset g keeps its K0 best candidates: beam positions g*K0 .. g*K0 + K0-1."""
        K0, C, D, width = self.K0, self.C, self.D, self.width
        stay = tf.broadcast_to(self.row_group[None, :, None], [B, K, K0])
        groups = tf.reshape(tf.concat([stay, tf.reshape(forced_groups, [B, K, C * D])], 2), [B, K * width])
        picks = []
        for g in range(self.G):
            _, best_g = tf.math.top_k(tf.where(groups == g, cand_sums / penalty, _NEG_INF), k=K0)
            picks.append(best_g)
        best = tf.concat(picks, 1)  # (B, K) into K*width
        # a subset with fewer than K0 candidates of its own: the rest are dead
        in_group = tf.equal(tf.gather(groups, best, batch_dims=1), self.row_group[None, :])
        return best, tf.where(in_group, tf.gather(cand_sums, best, batch_dims=1), _NEG_INF)  # (B, K)

    def finish(self, scores, order, B, K):
        """Most constraints met first, then score; the K0 best of the K0 * G."""
        met = tf.reduce_sum(tf.cast(tf.bitwise.bitwise_and(self.row_group[:, None], self.bits[None, :]) > 0,
                                    tf.int32), 1)
        met = tf.broadcast_to(met[None, :], [B, K])  # (B, K)
        by_met = tf.argsort(tf.gather(tf.where(tf.equal(scores, _NEG_INF), -1, met), order, batch_dims=1),
                            axis=1, direction="DESCENDING", stable=True)
        return tf.gather(order, by_met, batch_dims=1)[:, :self.K0], {"constraints_met": met}


def strategy_for(temperature=None, top_k=0, seed=0, constraints=None, constraint_deadline=0):
    """The strategy these settings ask for: sampling with a temperature, constrained with
    constraints, else beam search."""
    if constraints is not None and constraint_sizes(constraints)[0]:
        if temperature is not None:
            raise ValueError("constraints need beam search: sampling draws one unconstrained hypothesis")
        return Constrained(constraints, constraint_deadline)
    if temperature is not None:
        return Sampling(temperature, top_k, seed)
    return BeamStrategy()
