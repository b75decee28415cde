"""The one beam search of captioner; greedy search is beam search with one beam.

Every generator decodes through :func:`beam_search`. It is pure TensorFlow (one
``tf.while_loop`` over time steps, no numpy, no python loop over steps or inputs), so it runs
eagerly and inside ``tf.function`` / Keras layers saved to ``.keras``, with a dynamic batch size.

Layout: the ``K = beam_size`` hypotheses of the ``B`` inputs are rows of ONE tensor of
``N = B * K`` rows; row ``b * K + k`` is beam ``k`` of input ``b`` (what :func:`tile_beams`
makes).

The model is seen through one function::

    step_fn(tokens, state) -> (log_probs, new_state, attention)

    tokens     int32 (N,)     the previous token of every hypothesis (``start_id`` at step 0)
    state      nest           tf.nest structure of tensors with leading dim N
    log_probs  float (N, V)   log-softmaxed next-token distribution
    new_state  nest           same structure (and dtypes) as ``state``
    attention  float (N, R)   this step's attention weights; ignored (may be None) when
                              ``attention_size`` is None

Semantics (hand-checked in tests/decoding/test_beam_search.py):

* Step 0 expands only beam 0 of each input (the others start at -inf), so the first step
  yields K distinct hypotheses.
* Each step a candidate scores ``(sum + log_prob) / length ** alpha`` where ``length`` counts
  generated tokens including this one (and ``<end>``); the top K of the K*V candidates of each
  input survive.
* A hypothesis that emitted ``end_id`` is FROZEN: its only continuation is ``pad_id`` with
  log-prob 0 and no length increase, so its sum, length and score never change; it keeps
  competing with that score and may still win.
* The loop stops when every hypothesis is finished (or dead, see below) or after
  ``max_length`` steps; unfinished hypotheses are returned as they are.
* ``rules`` (:mod:`captioner.decoding.rules`) change each step's log-probabilities before the
  candidates are chosen, in order: :class:`~captioner.decoding.rules.NoRepeatNGram` (no repeated
  n-gram), :class:`~captioner.decoding.rules.TokenBonus` (a soft lexical constraint per input),
  :class:`~captioner.decoding.rules.BanTokens` (ids never generated).
* ``strategy`` (:mod:`captioner.decoding.strategies`) chooses candidates and survivors: beam search
  (the default), :class:`~captioner.decoding.strategies.Sampling` (one drawn token per step) or
  :class:`~captioner.decoding.strategies.Constrained`: lexical constraints (Anderson et al. 2017, "Guided Open
  Vocabulary Image Captioning with Constrained Beam Search"): input b must use, for each c, one
  of the ids ``constraints[b, c, :]`` (a disjunction; -1 pads; a constraint of -1 only is absent).
  The search keeps ``K`` beams for each of the ``G = 2 ** C`` subsets of constraints met so far
  (a finite-state machine over subsets): row ``b * K * G + g * K + k`` is beam k of subset g
  (bit c of g set: constraint c met). Each step a beam of subset g extends by its K best tokens
  that meet no unmet constraint (staying in g) and by every id of its unmet constraints (moving
  to g | the constraints that id meets); each subset keeps its K best candidates. The result is
  ranked by the number of constraints met first, then by score: the best hypothesis meeting all
  of them when one exists. ``"constraints_met"`` (B, K) says how many each meets.
* If an input has fewer than K hypotheses of finite log-probability (tiny vocabularies, or a
  model that puts -inf on tokens), the remaining beams are "dead": score -inf, sorted last.

``step_fn`` runs on all N rows every step, finished and dead beams included (they are fed
``pad_id``, which must therefore be a valid token id < V); what it returns for them is ignored.

With ``compact=True`` it runs only on the rows still being extended (neither finished nor dead)
and is called as ``step_fn(tokens, state, rows)``: ``tokens`` (M,) and ``state`` (leaves (M, ...))
hold those M rows only and ``rows`` int32 (M,) says which (row ``b * K + k``, so
``rows // beam_size`` is the input of each). Per-input constants need not be tiled then:
``tf.gather(memory, rows // beam_size)``. The results are the same; the work per step shrinks
as hypotheses finish (most captions end long before ``max_length``, and the loop runs until
the last hypothesis of the batch does), and step 0 runs on beam 0 of each input only.
"""

import dataclasses

import tensorflow as tf

from captioner.decoding.penalties import length_penalty, normalized_score
from captioner.decoding.rules import StepView
from captioner.decoding.strategies import BeamStrategy, constraint_sizes

_NEG_INF = float("-inf")
GRAPH_BOUNDS = {"beam_size": 64, "max_length": 1000}  # checked on tensor settings (exported SavedModels)


@dataclasses.dataclass(frozen=True)
class SearchSettings:
    """The shape of one search: ``beam_size`` K >= 1 and ``max_length`` >= 1 (the most generated
    tokens per hypothesis, ``<end>`` included; python ints, or scalar int tensors: then one graph
    serves every value, as an exported SavedModel's inputs need), the length penalty exponent
    ``alpha`` (0: raw log-prob sums, 1: average log-prob per token; float or scalar tensor), and the
    special ids: ``start_id``, ``end_id`` (None: no token ends a hypothesis, a character model runs
    ``max_length`` steps) and ``pad_id`` (fills tokens after ``<end>``; must be a valid id < V)."""

    beam_size: object
    max_length: object
    alpha: object = 0.0
    start_id: int = 1
    end_id: int | None = 2
    pad_id: int = 0


def tile_beams(x, beam_size):
    """Repeat every row ``beam_size`` times: (B, ...) -> (B * beam_size, ...).

    Row ``b * beam_size + k`` is beam ``k`` of input ``b``, the row order :func:`beam_search`
    uses. Works on a tensor or a tf.nest structure of tensors; use it for per-input constants
    that ``step_fn`` closes over (e.g. annotations (B, R, D) -> (B*K, R, D)).
    """
    return tf.nest.map_structure(lambda t: tf.repeat(t, beam_size, axis=0), x)


def _loop_invariant(shape):
    """The shape with its leading (batch * beam) dim left unknown."""
    shape = tf.TensorShape(shape)
    if shape.rank is None:
        return shape
    return tf.TensorShape([None]).concatenate(shape[1:])


def _search_sizes(beam_size, max_length):
    """(beam_size, max_length, checks): python ints checked here, or scalar int32 tensors (the
    inputs of an exported serving signature) checked in the graph by the returned assertions."""
    sizes, checks = [], []
    for name, value in (("beam_size", beam_size), ("max_length", max_length)):
        if tf.is_tensor(value):
            value = tf.cast(value, tf.int32)
            static = tf.get_static_value(value)
            if static is None:
                # an exported signature's input: the commands' documented bound (captioner.errors.SEARCH_BOUNDS)
                high = GRAPH_BOUNDS[name]
                checked = [tf.debugging.assert_greater_equal(value, 1, message=f"{name} must be >= 1"),
                           tf.debugging.assert_less_equal(value, high, message=f"{name} must be at most {high}")]
                checks.extend(checked)
                with tf.control_dependencies(checked):  # no op reads the size before its check has passed
                    sizes.append(tf.identity(tf.reshape(value, [])))
                continue
            value = int(static)
        value = int(value)
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
        sizes.append(value)
    return sizes[0], sizes[1], checks


def rows_per_input(beam_size, constraints=None):
    """Rows of the search per input: ``beam_size``, times ``2 ** C`` with C constraints."""
    return beam_size * constraint_sizes(constraints)[2]


def beam_search(step_fn, initial_state, batch_size, settings, *, rules=(), strategy=None, start_tokens=None,
                attention_size=None, compact=False):
    """Batched beam search over ``batch_size`` inputs with ``settings.beam_size`` beams each.

    Args:
        step_fn: ``(tokens (N,) int32, state) -> (log_probs (N, V), new_state, attention (N, R))``
            with ``N = batch_size * beam_size`` (see the module docstring).
        initial_state: tf.nest structure of tensors with leading dim ``batch_size`` (NOT tiled;
            it is tiled here). May be an empty structure, e.g. ``()``.
        batch_size: int or scalar int tensor (e.g. ``tf.shape(images)[0]``).
        settings: a :class:`SearchSettings` (beam size, max length, alpha, special ids).
        rules: :mod:`captioner.decoding.rules` applied in order to each step's log-probabilities
            (banned ids, n-gram blocking, a token bonus per input).
        strategy: :mod:`captioner.decoding.strategies` (default: beam search); sampling needs
            ``beam_size`` 1; constrained search a python int ``beam_size`` (with ``compact``, ``rows``
            count :func:`rows_per_input` rows per input: ``beam_size * 2 ** C``).
        start_tokens: int32 (B,) the first input token of each input instead of ``start_id``
            (a language model continuing a prompt, a captioner's style token).
        attention_size: R, int or scalar int tensor, when ``step_fn`` returns attention weights;
            None when the model has no attention: the third output of ``step_fn`` is then
            ignored (return None) and ``"attention"`` has shape (B, K, max_length, 0).
        compact: call ``step_fn(tokens, state, rows)`` on the live rows only (module docstring).

    Returns:
        dict of tensors, hypotheses of each input sorted best first by ``scores``:
            "tokens"     int32   (B, K, max_length)  generated tokens, ``<end>`` included, then pad
            "lengths"    int32   (B, K)              tokens generated, ``<end>`` included
            "scores"     float32 (B, K)              log_probs / lengths ** alpha (the ranking)
            "log_probs"  float32 (B, K)              summed log-probabilities
            "finished"   bool    (B, K)              emitted ``<end>`` within max_length
            "attention"  float32 (B, K, max_length, R)  attention of each generated token,
                                                        zeros after the end
            "constraints_met" int32 (B, K)           with constraints: how many each meets
    """
    strategy = strategy or BeamStrategy()
    beam_size, max_length, checks = _search_sizes(settings.beam_size, settings.max_length)
    alpha, pad_id, start_id = settings.alpha, settings.pad_id, settings.start_id
    end_id = -1 if settings.end_id is None else int(settings.end_id)  # -1: never generated, nothing ends
    for rule in rules:
        rule.check(settings)
    K = strategy.rows(beam_size)  # all the beams of an input (K0 * 2 ** C when constrained)
    T = max_length  # python ints, or scalar int32 tensors (an exported signature's inputs)
    K_static = K if isinstance(K, int) else None
    T_static = T if isinstance(T, int) else None
    with_attention = attention_size is not None

    with tf.control_dependencies(checks):
        B = tf.identity(tf.convert_to_tensor(batch_size, dtype=tf.int32))  # scalar
    N = B * K
    R = tf.convert_to_tensor(attention_size if with_attention else 0, dtype=tf.int32)
    R_static = tf.get_static_value(R)
    R_static = None if R_static is None else int(R_static)

    state = tile_beams(initial_state, K)  # leaves (N, ...)
    if start_tokens is None:
        tokens = tf.fill([N], tf.constant(start_id, tf.int32))  # (N,)
    else:
        tokens = tf.repeat(tf.cast(start_tokens, tf.int32), K)  # (N,)
    sums = strategy.start(B, K)  # (B, K)
    lengths = tf.zeros([B, K], tf.int32)
    finished = tf.zeros([B, K], tf.bool)
    token_hist = tf.fill([N, T], tf.constant(pad_id, tf.int32))  # (N, T)
    attn_hist = tf.zeros([N, T, R], tf.float32)  # (N, T, R)
    parent_offset = K * tf.range(B)[:, None]  # (B, 1): first row of each input
    columns = tf.range(T)  # (T,)
    width = strategy.width  # candidates per beam
    # continuations of a finished beam: pad (log-prob 0), then none
    frozen = tf.where(tf.range(width) == 0, 0.0, _NEG_INF)  # (width,)

    def cond(step, tokens, state, sums, lengths, finished, token_hist, attn_hist):
        done = finished | tf.equal(sums, _NEG_INF)  # (B, K): finished or dead
        return tf.logical_and(step < T, tf.logical_not(tf.reduce_all(done)))

    def body(step, tokens, state, sums, lengths, finished, token_hist, attn_hist):
        live_rows = None
        if compact:
            live = tf.reshape(tf.logical_not(finished | tf.equal(sums, _NEG_INF)), [N])  # (N,)
            live_rows = tf.cast(tf.where(live)[:, 0], tf.int32)  # (M,)
            log_probs, new_state, attention = step_fn(
                tf.gather(tokens, live_rows), tf.nest.map_structure(lambda s: tf.gather(s, live_rows), state),
                live_rows)  # (M, V), leaves (M, ...), (M, R)
        else:
            log_probs, new_state, attention = step_fn(tokens, state)
        log_probs = tf.cast(log_probs, tf.float32)  # (N or M, V)
        V = tf.shape(log_probs)[-1]
        rows_now = live_rows if compact else tf.range(N)  # (N or M,)
        view = StepView(step, token_hist, live_rows, rows_now // K, V)
        for rule in rules:
            log_probs = rule(log_probs, view)
        # (if V < K: -inf columns, so that every beam has K candidates)
        log_probs = tf.pad(log_probs, [[0, 0], [0, tf.maximum(K - V, 0)]],
                           constant_values=_NEG_INF)
        # All candidates of a beam share its length, hence its penalty: only the K best
        # continuations of each beam can survive, so rank K*K candidates, not K*V.
        cand_log_probs, cand_tokens, extra = strategy.candidates(log_probs, rows_now, step)
        # Same structure and dtypes as the loop variable, whatever nest type step_fn used.
        new_state = tf.nest.pack_sequence_as(state, tf.nest.flatten(new_state))
        if compact:  # back to N rows; the rows not extended are finished (frozen below) or dead
            at = live_rows[:, None]  # (M, 1)
            cand_log_probs = tf.scatter_nd(at, cand_log_probs, [N, width])  # dead: -inf sum + 0
            cand_tokens = tf.scatter_nd(at, cand_tokens, [N, width])
            if extra is not None:
                extra = tf.scatter_nd(at, extra, [N, extra.shape[1]])
            new_state = tf.nest.map_structure(
                lambda old, new: tf.tensor_scatter_nd_update(old, at, tf.cast(new, old.dtype)), state, new_state)
            if with_attention and attention is not None:
                attention = tf.scatter_nd(at, tf.cast(attention, tf.float32), [N, R])  # (N, R)
        cand_log_probs = tf.reshape(cand_log_probs, [B, K, width])
        cand_tokens = tf.reshape(cand_tokens, [B, K, width])

        # A finished beam has one continuation: pad_id, log-prob 0, no length increase.
        cand_log_probs = tf.where(finished[:, :, None], frozen, cand_log_probs)  # (B, K, width)
        cand_tokens = tf.where(finished[:, :, None], pad_id, cand_tokens)
        cand_sums = tf.reshape(sums[:, :, None] + cand_log_probs, [B, K * width])
        cand_lengths = lengths + tf.cast(tf.logical_not(finished), tf.int32)  # (B, K)
        penalty = tf.repeat(length_penalty(cand_lengths, alpha), width, axis=1)  # (B, K*width)
        best, sums = strategy.select(cand_sums, penalty, extra, B, K)  # (B, K) into K*width
        parents = best // width  # (B, K) beam each survivor extends
        new_tokens = tf.gather(tf.reshape(cand_tokens, [B, K * width]), best, batch_dims=1)
        new_tokens = tf.where(tf.equal(sums, _NEG_INF), pad_id, new_tokens)  # dead: pad
        lengths = tf.gather(cand_lengths, parents, batch_dims=1)  # (B, K)
        parent_finished = tf.gather(finished, parents, batch_dims=1)  # (B, K)
        finished = parent_finished | tf.equal(new_tokens, end_id)  # (B, K)

        rows = tf.reshape(parents + parent_offset, [N])  # (N,) parent row of each survivor
        tokens = tf.reshape(new_tokens, [N])  # (N,)
        now = tf.equal(columns, step)  # (T,) the column written this step
        token_hist = tf.where(now, tokens[:, None], tf.gather(token_hist, rows))  # (N, T)

        state = tf.nest.map_structure(
            lambda old, new: tf.gather(tf.cast(new, old.dtype), rows), state, new_state)

        if with_attention:
            if attention is None:
                raise ValueError("attention_size was given but step_fn returned attention=None")
            attention = tf.gather(tf.cast(attention, tf.float32), rows)  # (N, R)
            attention = tf.where(tf.reshape(parent_finished, [N, 1]), 0.0, attention)
            attn_hist = tf.where(now[None, :, None], attention[:, None, :],
                                 tf.gather(attn_hist, rows))  # (N, T, R)
        return step + 1, tokens, state, sums, lengths, finished, token_hist, attn_hist

    loop_vars = (tf.constant(0), tokens, state, sums, lengths, finished, token_hist, attn_hist)
    invariants = (
        tf.TensorShape([]),
        tf.TensorShape([None]),
        tf.nest.map_structure(lambda s: _loop_invariant(s.shape), state),
        tf.TensorShape([None, K_static]),
        tf.TensorShape([None, K_static]),
        tf.TensorShape([None, K_static]),
        tf.TensorShape([None, T_static]),
        tf.TensorShape([None, T_static, R_static]),
    )
    _, _, _, sums, lengths, finished, token_hist, attn_hist = tf.while_loop(
        cond, body, loop_vars, shape_invariants=invariants, maximum_iterations=T)

    scores = normalized_score(sums, lengths, alpha)  # (B, K)
    order = tf.argsort(scores, axis=1, direction="DESCENDING", stable=True)  # (B, K)
    order, extras = strategy.finish(scores, order, B, K)

    def best_first(x):
        return tf.gather(x, order, batch_dims=1)

    out = {
        "tokens": best_first(tf.reshape(token_hist, [B, K, T])),
        "lengths": best_first(lengths),
        "scores": best_first(scores),
        "log_probs": best_first(sums),
        "finished": best_first(finished),
        "attention": best_first(tf.reshape(attn_hist, [B, K, T, R])),
    }
    out.update({name: best_first(value) for name, value in extras.items()})
    return out


def greedy_search(step_fn, initial_state, batch_size, settings, *, rules=(), start_tokens=None,
                  attention_size=None, compact=False):
    """Greedy decoding: :func:`beam_search` with one beam (``settings.beam_size`` is ignored; the
    same outputs, K = 1). ``alpha`` does not change the choice, only the reported ``scores``."""
    return beam_search(step_fn, initial_state, batch_size, dataclasses.replace(settings, beam_size=1), rules=rules,
                       start_tokens=start_tokens, attention_size=attention_size, compact=compact)
