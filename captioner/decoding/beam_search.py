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
* Token ids in ``banned_ids`` get log-probability -inf at every step: they are never generated.
* ``no_repeat_ngram = n > 0`` (Paulus et al. 2018's trigram blocking for n = 3): a token that
  would complete an n-gram the hypothesis already holds gets log-probability -inf at that step,
  so no hypothesis repeats an n-gram (n = 1: no token twice). ``<start>`` is not part of them.
* ``constraints`` (B, C, D) int32: lexical constraints (Anderson et al. 2017, "Guided Open
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

import tensorflow as tf

from captioner.decoding.penalties import length_penalty, normalized_score
from captioner.decoding.sampling import check_sampling, sample_tokens

_NEG_INF = float("-inf")
GRAPH_BOUNDS = {"beam_size": 64, "max_length": 1000}  # checked on tensor settings (exported SavedModels)


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


MAX_CONSTRAINTS = 4  # 2 ** C beams per input and beam: the search grows fast with C


def _constraint_sizes(constraints):
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


def rows_per_input(beam_size, constraints=None):
    """Rows of the search per input: ``beam_size``, times ``2 ** C`` with C constraints."""
    return beam_size * _constraint_sizes(constraints)[2]


def _constrained_candidates(log_probs, constraints, group, k, bits, late=None):
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


def deadline_per_input(constraint_deadline) -> bool:
    """Whether a ``constraint_deadline`` is one per input (a list, array or tensor of rank 1),
    not one int for all."""
    return isinstance(constraint_deadline, (list, tuple)) or getattr(constraint_deadline, "ndim", 0) == 1


def beam_search(step_fn, initial_state, batch_size, *, beam_size, max_length, start_id, end_id,
                alpha=0.0, attention_size=None, pad_id=0, banned_ids=(), compact=False, no_repeat_ngram=0,
                start_tokens=None, temperature=None, top_k=0, seed=0, token_bonus=None, constraints=None,
                constraint_deadline=0):
    """Batched beam search over ``batch_size`` inputs with ``beam_size`` beams each.

    Args:
        step_fn: ``(tokens (N,) int32, state) -> (log_probs (N, V), new_state, attention (N, R))``
            with ``N = batch_size * beam_size`` (see the module docstring).
        initial_state: tf.nest structure of tensors with leading dim ``batch_size`` (NOT tiled;
            it is tiled here). May be an empty structure, e.g. ``()``.
        batch_size: int or scalar int tensor (e.g. ``tf.shape(images)[0]``).
        beam_size: K >= 1, a python int, or a scalar int tensor (then the beam dimension of
            the outputs is unknown when traced: one graph serves every width, as an exported
            SavedModel's ``beam_size`` input needs).
        max_length: >= 1, the most generated tokens per hypothesis, ``<end>`` included
            (``<start>`` is not generated and not counted); a python int or a scalar int tensor.
        start_id, end_id, pad_id: python ints; ``pad_id`` fills tokens after ``<end>``.
        banned_ids: token ids that are never generated (their log-probability is -inf at every
            step), e.g. ``<pad>``, ``<unk>``, ``<start>``; ``end_id`` cannot be banned. The frozen
            ``pad_id`` continuation of a finished hypothesis is the search's own and not affected.
        alpha: length penalty exponent (float or scalar tensor); 0 = raw log-prob sums,
            1 = average log-prob per token.
        attention_size: R, int or scalar int tensor, when ``step_fn`` returns attention weights;
            None when the model has no attention: the third output of ``step_fn`` is then
            ignored (return None) and ``"attention"`` has shape (B, K, max_length, 0).
        compact: call ``step_fn(tokens, state, rows)`` on the live rows only (module docstring).
        no_repeat_ngram: n > 0: never complete an n-gram a hypothesis already holds (0: off).
        start_tokens: int32 (B,) the first input token of each input instead of ``start_id``
            (a language model continuing a prompt: the prompt's last token).
        temperature, top_k, seed: sampling instead of beam search (``beam_size`` must be 1):
            with ``temperature`` not None, each step's token is drawn by
            :func:`captioner.decoding.sampling.sample_tokens` (T = 0: the argmax, greedy;
            ``top_k`` K > 0: from the K most probable only), keyed by ``(seed, step)``;
            ``seed`` an int, or a scalar int32 tensor in [0, 2**31).
            ``log_probs`` are those of the drawn tokens under the model.
        end_id may be None: no token ends a hypothesis (a character model), every hypothesis
            runs ``max_length`` steps.
        token_bonus: float (B, V) or None: a soft lexical constraint per input (object tags,
            :mod:`captioner.tagging`): ``token_bonus[b, v]`` is added to the log-probability of
            token v in every hypothesis of input b that does not hold v yet (once it does, the
            bonus is gone: no word is pushed twice). The bonus enters ``log_probs`` and
            ``scores`` as any log-probability does.
        constraints: int32 (B, C, D) or None: hard lexical constraints, disjunctive (module
            docstring); C and D static (C <= MAX_CONSTRAINTS). With ``compact``, ``rows`` count
            :func:`rows_per_input` rows per input (``beam_size * 2 ** C``).
        constraint_deadline: n > 0: a hypothesis meets one of its constraints within its first n
            tokens or dies (the object a photo's tags name is its subject: "a cat is ...", not
            "a man is sitting in front of a cat"); 0: anywhere. Or int32 (B,): each input's own
            n (0: anywhere), a tensor (a photo the captioner knows keeps its sentence, an unknown
            one gets the object as its subject).

    Returns:
        dict of tensors, hypotheses of each input sorted best first by ``scores``:
            "tokens"     int32   (B, K, max_length)  generated tokens, ``<end>`` included, then pad
            "lengths"    int32   (B, K)              tokens generated, ``<end>`` included
            "scores"     float32 (B, K)              log_probs / lengths ** alpha (the ranking)
            "log_probs"  float32 (B, K)              summed log-probabilities
            "finished"   bool    (B, K)              emitted ``<end>`` within max_length
            "attention"  float32 (B, K, max_length, R)  attention of each generated token,
                                                        zeros after the end
            "constraints_met" int32 (B, K)           with ``constraints``: how many each meets
    """
    beam_size, max_length, checks = _search_sizes(beam_size, max_length)
    per_input_deadline = deadline_per_input(constraint_deadline)
    if per_input_deadline:  # int32 (B,): each input's own deadline
        constraint_deadline = tf.reshape(tf.cast(constraint_deadline, tf.int32), [-1])
    elif constraint_deadline < 0:
        raise ValueError(f"constraint_deadline must be >= 0, got {constraint_deadline}")
    else:
        constraint_deadline = int(constraint_deadline)
    banned_ids = sorted({int(i) for i in banned_ids})
    end_id = -1 if end_id is None else int(end_id)  # -1: never generated, nothing ends
    sampling = temperature is not None
    # the draw's key is (seed, step), int32; a scalar tensor seed (a compiled function's input) passes as it is
    seed = tf.cast(seed, tf.int32) if tf.is_tensor(seed) else int(seed) % 2**31
    if sampling:
        temperature, top_k = check_sampling(temperature, top_k)
        if beam_size != 1:
            raise ValueError(f"sampling draws one hypothesis per input: beam_size must be 1, got {beam_size}")
    if end_id in banned_ids:
        raise ValueError(f"end_id {end_id} cannot be banned: no hypothesis could finish")
    if any(i < 0 for i in banned_ids):
        raise ValueError(f"banned_ids must be token ids >= 0, got {banned_ids}")
    no_repeat_ngram = int(no_repeat_ngram)
    if no_repeat_ngram < 0:
        raise ValueError(f"no_repeat_ngram must be >= 0, got {no_repeat_ngram}")
    C, D, G = _constraint_sizes(constraints)
    if C and sampling:
        raise ValueError("constraints need beam search: sampling draws one unconstrained hypothesis")
    K0 = beam_size  # beams per subset of constraints met (all of them when there are no constraints)
    if C:
        if not isinstance(K0, int):
            raise ValueError("constraints need a python int beam_size")
        beam_size = K0 * G
    K, T = beam_size, max_length  # python ints, or scalar int32 tensors (an exported signature's inputs)
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
    # Only beam 0 is alive at first, so the first expansion gives K distinct hypotheses.
    first = tf.where(tf.range(K) == 0, 0.0, _NEG_INF)[None, :]  # (1, K)
    sums = tf.tile(first, [B, 1])  # (B, K)
    if C:  # only beam 0 of the subset of the absent constraints (-1 only) is alive at first
        constraints = tf.cast(constraints, tf.int32)  # (B, C, D)
        absent = tf.reduce_all(constraints < 0, axis=2)  # (B, C)
        start_group = tf.reduce_sum(tf.cast(absent, tf.int32) * (2 ** tf.range(C)), axis=1)  # (B,)
        sums = tf.where(tf.range(K)[None, :] == (start_group * K0)[:, None], 0.0, _NEG_INF)  # (B, K)
        row_group = tf.range(K) // K0  # (K,) the subset each beam position holds
        bits = 2 ** tf.range(C)  # (C,)
    lengths = tf.zeros([B, K], tf.int32)
    finished = tf.zeros([B, K], tf.bool)
    token_hist = tf.fill([N, T], tf.constant(pad_id, tf.int32))  # (N, T)
    attn_hist = tf.zeros([N, T, R], tf.float32)  # (N, T, R)
    parent_offset = K * tf.range(B)[:, None]  # (B, 1): first row of each input
    columns = tf.range(T)  # (T,)
    width = K0 + C * D  # candidates per beam: its K0 best tokens (+ one per constraint id)
    # continuations of a finished beam: pad (log-prob 0), then none
    frozen = tf.where(tf.range(width) == 0, 0.0, _NEG_INF)  # (width,)

    def cond(step, tokens, state, sums, lengths, finished, token_hist, attn_hist):
        done = finished | tf.equal(sums, _NEG_INF)  # (B, K): finished or dead
        return tf.logical_and(step < T, tf.logical_not(tf.reduce_all(done)))

    def body(step, tokens, state, sums, lengths, finished, token_hist, attn_hist):
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
        if no_repeat_ngram:
            history = tf.gather(token_hist, live_rows) if compact else token_hist  # (N or M, T)
            log_probs = log_probs + repeated_ngram_bans(history, step, no_repeat_ngram, V)
        if token_bonus is not None:  # (B, V) -> the rows' inputs, off for tokens a row holds already
            inputs_of_rows = (live_rows if compact else tf.range(N)) // K  # (N or M,)
            history = tf.gather(token_hist, live_rows) if compact else token_hist  # (N or M, T)
            held = tf.reduce_max(tf.one_hot(history, V, dtype=tf.float32), axis=1)  # (N or M, V)
            log_probs = log_probs + tf.gather(tf.cast(token_bonus, tf.float32), inputs_of_rows) * (1.0 - held)
        if banned_ids:  # + (V,): -inf at the banned ids, 0 elsewhere (x + 0 is x exactly)
            log_probs = log_probs + tf.scatter_nd([[i] for i in banned_ids],
                                                  tf.fill([len(banned_ids)], _NEG_INF), [V])
        # (if V < K: -inf columns, so that every beam has K candidates)
        log_probs = tf.pad(log_probs, [[0, 0], [0, tf.maximum(K - V, 0)]],
                           constant_values=_NEG_INF)
        # All candidates of a beam share its length, hence its penalty: only the K best
        # continuations of each beam can survive, so rank K*K candidates, not K*V.
        if sampling:  # K = 1: one candidate per row, drawn instead of the top one
            cand_log_probs, cand_tokens = sample_tokens(
                log_probs, temperature=temperature, top_k=top_k, seed=tf.stack([seed, step]))  # (N|M, 1)
        elif C:  # K0 best that stay in the row's subset, then each id of its unmet constraints
            rows_now = live_rows if compact else tf.range(N)  # (N or M,)
            groups_now = tf.gather(row_group, rows_now % K)  # (N or M,)
            late = None
            if per_input_deadline or constraint_deadline:  # at the deadline, a beam that met none must meet one now
                starts = tf.gather(start_group, rows_now // K)  # (N or M,); G - 1: no constraint at all
                due = tf.gather(constraint_deadline, rows_now // K) if per_input_deadline else constraint_deadline
                late = (due > 0) & (step >= due - 1) & tf.equal(groups_now, starts) & (starts < G - 1)
            cand_log_probs, cand_tokens, forced_groups = _constrained_candidates(
                log_probs, tf.gather(constraints, rows_now // K), groups_now, K0, bits, late)
        else:
            cand_log_probs, cand_tokens = tf.math.top_k(log_probs, k=K)  # (N, K) (compact: (M, K))
        # Same structure and dtypes as the loop variable, whatever nest type step_fn used.
        new_state = tf.nest.pack_sequence_as(state, tf.nest.flatten(new_state))
        if compact:  # back to N rows; the rows not extended are finished (frozen below) or dead
            at = live_rows[:, None]  # (M, 1)
            cand_log_probs = tf.scatter_nd(at, cand_log_probs, [N, width])  # dead: -inf sum + 0
            cand_tokens = tf.scatter_nd(at, cand_tokens, [N, width])
            if C:
                forced_groups = tf.scatter_nd(at, forced_groups, [N, C * D])
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

        if C:  # each subset g keeps its K0 best candidates: beam positions g*K0 .. g*K0 + K0-1
            stay = tf.broadcast_to(row_group[None, :, None], [B, K, K0])
            groups = tf.reshape(tf.concat([stay, tf.reshape(forced_groups, [B, K, C * D])], 2), [B, K * width])
            picks = []
            for g in range(G):
                _, best_g = tf.math.top_k(tf.where(groups == g, cand_sums / penalty, _NEG_INF), k=K0)
                picks.append(best_g)
            best = tf.concat(picks, 1)  # (B, K) into K*width
            # a subset with fewer than K0 candidates of its own: the rest are dead
            in_group = tf.equal(tf.gather(groups, best, batch_dims=1), row_group[None, :])
            sums = tf.where(in_group, tf.gather(cand_sums, best, batch_dims=1), _NEG_INF)  # (B, K)
        else:
            _, best = tf.math.top_k(cand_sums / penalty, k=K)  # (B, K) into K*K
            sums = tf.gather(cand_sums, best, batch_dims=1)  # (B, K)
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
    if C:  # most constraints met first, then score; the K0 best of the K0 * G
        met = tf.reduce_sum(tf.cast(tf.bitwise.bitwise_and(row_group[:, None], bits[None, :]) > 0, tf.int32), 1)
        met = tf.broadcast_to(met[None, :], [B, K])  # (B, K)
        by_met = tf.argsort(tf.gather(tf.where(tf.equal(scores, _NEG_INF), -1, met), order, batch_dims=1),
                            axis=1, direction="DESCENDING", stable=True)
        order = tf.gather(order, by_met, batch_dims=1)[:, :K0]  # (B, K0)

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
    if C:
        out["constraints_met"] = best_first(met)
    return out


def greedy_search(step_fn, initial_state, batch_size, *, max_length, start_id, end_id,
                  alpha=0.0, attention_size=None, pad_id=0, banned_ids=(), compact=False, no_repeat_ngram=0,
                  start_tokens=None):
    """Greedy decoding: :func:`beam_search` with ``beam_size=1`` (same arguments and outputs,
    K = 1). ``alpha`` does not change the choice, only the reported ``scores``."""
    return beam_search(step_fn, initial_state, batch_size, beam_size=1, max_length=max_length,
                       start_id=start_id, end_id=end_id, alpha=alpha,
                       attention_size=attention_size, pad_id=pad_id, banned_ids=banned_ids,
                       compact=compact, no_repeat_ngram=no_repeat_ngram, start_tokens=start_tokens)
