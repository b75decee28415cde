"""Beam search against hand-worked cases on a tiny Markov-chain "model".

The model: the next-token distribution depends only on the previous token, through a fixed
transition table ``P[prev, next]``; the state carries which table an input uses (so a batch
can mix tables), the step count and a code of the prefix fed so far. The attention of a step
is ``[step, prefix code]``, so the attention rows returned can be checked against the returned
tokens: row t of a hypothesis y_1..y_L must be ``[t + 1, code(<start>, y_1, ..., y_t)]``.

Vocabulary: 0 <pad>, 1 <start>, 2 <end>, 3 A, 4 B. Probabilities not listed are 0 (log -inf).
"""

import functools
import math

import keras
import numpy as np
import pytest
import tensorflow as tf

from captioner.decoding import Steering, tile_beams
from search_cases import flat_search, flat_greedy

PAD, START, END, A, B = 0, 1, 2, 3, 4
V = 5


def table(rows):
    """Log-prob table (V, V) from {prev: {next: prob}}; unlisted probabilities are 0."""
    p = np.zeros((V, V), np.float64)
    for prev, nexts in rows.items():
        for nxt, prob in nexts.items():
            p[prev, nxt] = prob
    p[[PAD, END]] = 1.0 / V  # fed only to finished beams: whatever it is must be ignored
    with np.errstate(divide="ignore"):
        return np.log(p).astype(np.float32)


# Greedy falls into a trap: A is the best first token, but its continuations are poor.
#   greedy: <start> A (.6) <end> (.4)            p = .24
#   beam 2: step 1 keeps [A] .6, [B] .4
#           step 2: [B end] .36, [A end] .24, [A A] .18, [A B] .18, [B A] .02, [B B] .02
#           keeps [B end], [A end]: both finished, stop.  best [B end], p = .36
GREEDY_TRAP = table({START: {A: 0.6, B: 0.4}, A: {END: 0.4, A: 0.3, B: 0.3},
                     B: {END: 0.9, A: 0.05, B: 0.05}})

# A short hypothesis wins at alpha=0, a longer one at alpha=1 (beam 2).
#   alpha 0: step 1 [A] ln.6 = -0.511, [end] ln.4 = -0.916 (finished)
#            step 2 [end] -0.916 (frozen), [A end] ln.36 = -1.022, [A A] ln.24 = -1.427
#            keeps [end], [A end]: all finished.  winner [end] -0.916
#   alpha 1: step 2 [end] -0.916/1, [A end] -1.022/2 = -0.511, [A A] -1.427/2 = -0.714
#            keeps [A end], [A A]   ([end] drops out)
#            step 3 [A end] -0.511 (frozen), [A A end] ln.144/3 = -0.646, [A A A] ln.096/3 = -0.781
#            keeps [A end], [A A end]: all finished.  winner [A end] -0.511
SHORT_VS_LONG = table({START: {END: 0.4, A: 0.6}, A: {END: 0.6, A: 0.4}})

# A hypothesis finished at step 1 stays frozen and wins later (beam 2, alpha 0).
#   step 1: [A] ln.55 = -0.598, [end] ln.45 = -0.799 (finished)
#   step 2: [A A] ln.495 = -0.703, [end] -0.799, [A end] ln.055 = -2.900  -> [A A], [end]
#   step 3: [end] -0.799, [A A A] ln.4455 = -0.809, [A A end] ln.0495      -> [end], [A A A]
#   step 4: [end] -0.799, [A A A A] ln.40095 = -0.914                       -> [end], [A A A A]
#   step 5: [end] -0.799, [A A A A A] ln.360855 = -1.019
#   max_length 2: [A A] (unfinished) leads; from max_length 3 on [end] is the winner.
FROZEN = table({START: {END: 0.45, A: 0.55}, A: {A: 0.9, END: 0.1}})

TABLES = np.stack([GREEDY_TRAP, SHORT_VS_LONG, FROZEN])  # (3, V, V)


def markov_step_fn(tables):
    tables = tf.convert_to_tensor(tables, tf.float32)  # (M, V, V)

    def step_fn(tokens, state):
        which = tf.cast(state["table"], tf.int32)  # (N,)
        log_probs = tf.gather_nd(tables, tf.stack([which, tokens], axis=1))  # (N, V)
        code = state["code"] * V + tf.cast(tokens, tf.float32)  # (N,) prefix incl. this token
        step = state["step"] + 1.0
        attention = tf.stack([step, code], axis=1)  # (N, 2)
        return log_probs, {"table": state["table"], "code": code, "step": step}, attention

    return step_fn


def initial_state(table_ids):
    table_ids = tf.cast(table_ids, tf.float32)  # (B,)
    zeros = tf.zeros_like(table_ids)
    return {"table": table_ids, "code": zeros, "step": zeros}


def compact_step_fn(step_fn, seen=None):
    """`step_fn` for ``compact=True``: (tokens, state, rows) -> ...; records each call's rows."""

    def fn(tokens, state, rows):
        tf.debugging.assert_equal(tf.shape(tokens)[0], tf.shape(rows)[0])
        if seen is not None:
            seen.append(rows.numpy().tolist())
        return step_fn(tokens, state)

    return fn


def decode(table_ids, beam_size, max_length, alpha=0.0, tables=TABLES, compact=False, seen=None, **kwargs):
    table_ids = tf.constant(table_ids, tf.float32)
    step_fn = markov_step_fn(tables)
    if compact:
        step_fn = compact_step_fn(step_fn, seen)
    return flat_search(step_fn, initial_state(table_ids), tf.shape(table_ids)[0],
                       beam_size=beam_size, max_length=max_length, start_id=START, end_id=END,
                       alpha=alpha, attention_size=2, pad_id=PAD, compact=compact, **kwargs)


def hyp(result, b, k):
    """(tokens up to length, length, score, log_prob, finished) of hypothesis k of input b."""
    length = int(result["lengths"][b, k])
    return (result["tokens"][b, k, :length].numpy().tolist(), length,
            float(result["scores"][b, k]), float(result["log_probs"][b, k]),
            bool(result["finished"][b, k]))


def assert_hyp(result, b, k, tokens, prob, finished, alpha=0.0):
    """Hypothesis k of input b is ``tokens`` with probability ``prob``, scored by hand."""
    got_tokens, length, score, log_prob, got_finished = hyp(result, b, k)
    assert (got_tokens, length, got_finished) == (tokens, len(tokens), finished)
    assert log_prob == pytest.approx(math.log(prob), abs=1e-5)
    assert score == pytest.approx(math.log(prob) / len(tokens) ** alpha, abs=1e-5)


def expected_attention(tokens, max_length):
    """Row t of a hypothesis y_1..y_L: [t + 1, code(<start>, y_1..y_t)]; zeros from L on."""
    rows = np.zeros((max_length, 2), np.float32)
    code = 0.0
    for t, fed in enumerate([START] + list(tokens[:-1])):
        code = code * V + fed
        rows[t] = [t + 1, code]
    return rows


def check_attention(result):
    tokens, lengths = result["tokens"].numpy(), result["lengths"].numpy()
    attention = result["attention"].numpy()
    T = tokens.shape[-1]
    for b in range(tokens.shape[0]):
        for k in range(tokens.shape[1]):
            if not np.isfinite(result["scores"][b, k]):
                continue  # dead beam
            L = lengths[b, k]
            np.testing.assert_array_equal(tokens[b, k, L:], PAD)
            np.testing.assert_array_equal(attention[b, k], expected_attention(tokens[b, k, :L], T))


def test_greedy_and_beam_disagree():
    greedy = flat_greedy(markov_step_fn(TABLES), initial_state(tf.constant([0.0])), 1,
                           max_length=5, start_id=START, end_id=END, attention_size=2)
    assert_hyp(greedy, 0, 0, [A, END], 0.24, True)
    assert greedy["tokens"].shape == (1, 1, 5)

    beam = decode([0], beam_size=2, max_length=5)
    assert_hyp(beam, 0, 0, [B, END], 0.36, True)
    assert_hyp(beam, 0, 1, [A, END], 0.24, True)
    check_attention(beam)


def test_alpha_changes_the_winner():
    short = decode([1], beam_size=2, max_length=6, alpha=0.0)
    assert_hyp(short, 0, 0, [END], 0.4, True)
    assert_hyp(short, 0, 1, [A, END], 0.36, True)

    long_ = decode([1], beam_size=2, max_length=6, alpha=1.0)
    assert_hyp(long_, 0, 0, [A, END], 0.36, True, alpha=1.0)  # -1.022 / 2 = -0.511
    assert_hyp(long_, 0, 1, [A, A, END], 0.144, True, alpha=1.0)  # -1.938 / 3 = -0.646
    check_attention(long_)


@pytest.mark.parametrize("max_length", [2, 3, 4, 5])
def test_end_hypothesis_stays_frozen(max_length):
    result = decode([2], beam_size=2, max_length=max_length)
    # [A A] leads at max_length 2; from 3 on the frozen [end] is the winner
    k_end = 1 if max_length == 2 else 0
    # still there with the same length, sum and score, never extended: pad after <end>
    assert_hyp(result, 0, k_end, [END], 0.45, True)
    np.testing.assert_array_equal(result["tokens"][0, k_end], [END] + [PAD] * (max_length - 1))
    # the other one ran on to max_length, unfinished: A A ... A
    assert_hyp(result, 0, 1 - k_end, [A] * max_length, 0.55 * 0.9 ** (max_length - 1), False)
    check_attention(result)


def test_max_length_cuts_and_attention_follows_the_hypotheses():
    result = decode([2], beam_size=2, max_length=3)
    np.testing.assert_array_equal(result["tokens"][0], [[END, PAD, PAD], [A, A, A]])
    np.testing.assert_array_equal(result["lengths"][0], [1, 3])
    np.testing.assert_array_equal(result["finished"][0], [True, False])
    # by hand: codes 1 (<start>), 1*5+3 = 8 (<start> A), 8*5+3 = 43 (<start> A A)
    np.testing.assert_array_equal(result["attention"][0, 0], [[1, 1], [0, 0], [0, 0]])
    np.testing.assert_array_equal(result["attention"][0, 1], [[1, 1], [2, 8], [3, 43]])


def test_batch_equals_one_by_one():
    ids = [2, 0, 1]
    batch = decode(ids, beam_size=3, max_length=5, alpha=0.5)
    for b, table_id in enumerate(ids):
        single = decode([table_id], beam_size=3, max_length=5, alpha=0.5)
        for key in single:
            np.testing.assert_array_equal(batch[key][b].numpy(), single[key][0].numpy(), key)
    check_attention(batch)


def test_output_shapes_and_dtypes():
    result = decode([0, 1], beam_size=3, max_length=4)
    shapes = {key: (tuple(value.shape), value.dtype) for key, value in result.items()}
    assert shapes == {
        "tokens": ((2, 3, 4), tf.int32), "lengths": ((2, 3), tf.int32),
        "scores": ((2, 3), tf.float32), "log_probs": ((2, 3), tf.float32),
        "finished": ((2, 3), tf.bool), "attention": ((2, 3, 4, 2), tf.float32)}
    scores = result["scores"].numpy()
    assert np.all(np.diff(scores, axis=1) <= 0)  # best first


def test_dead_beams_when_fewer_hypotheses_than_beams():
    # only <end> is possible after <start>: one live hypothesis, two dead; stops after 1 step
    only_end = table({START: {END: 1.0}})[None]
    result = decode([0], beam_size=3, max_length=4, tables=only_end)
    assert_hyp(result, 0, 0, [END], 1.0, True)
    assert np.all(np.isneginf(result["scores"][0, 1:].numpy()))


def test_tf_function_with_unknown_batch_equals_eager():
    step_fn = markov_step_fn(TABLES)

    def run(table_ids):
        return flat_search(step_fn, initial_state(table_ids), tf.shape(table_ids)[0],
                           beam_size=2, max_length=5, start_id=START, end_id=END, alpha=1.0,
                           attention_size=2)

    graph = tf.function(run, input_signature=[tf.TensorSpec([None], tf.float32)])
    assert graph.get_concrete_function().structured_outputs["tokens"].shape.as_list() == \
        [None, 2, 5]
    ids = tf.constant([1.0, 2.0, 0.0, 2.0])
    eager, traced = run(ids), graph(ids)
    for key in eager:
        np.testing.assert_array_equal(eager[key].numpy(), traced[key].numpy(), key)
    # another batch size, same graph
    assert graph(tf.constant([0.0]))["tokens"].shape == (1, 2, 5)


def test_no_attention_and_empty_state():
    log_probs = tf.constant(GREEDY_TRAP)

    def step_fn(tokens, state):  # state carries nothing
        return tf.gather(log_probs, tokens), state, None

    def run(batch_size):
        return flat_search(step_fn, (), batch_size, beam_size=2, max_length=5,
                           start_id=START, end_id=END)

    eager = run(3)
    graph = tf.function(run, input_signature=[tf.TensorSpec([], tf.int32)])(tf.constant(3))
    for result in (eager, graph):
        assert result["attention"].shape == (3, 2, 5, 0)
        np.testing.assert_array_equal(result["tokens"][:, 0, :2], [[B, END]] * 3)


def test_tile_beams_row_order():
    x = tf.constant([[1, 1], [2, 2]])
    np.testing.assert_array_equal(tile_beams(x, 3), [[1, 1]] * 3 + [[2, 2]] * 3)
    nested = tile_beams({"a": x, "b": (tf.constant([5, 6]),)}, 2)
    np.testing.assert_array_equal(nested["b"][0], [5, 5, 6, 6])


# --- against a plain python beam search (the per-input loop) on random tables -------------

def reference_beam_search(logp, beam_size, max_length, alpha):
    """One input, python lists, the same semantics, float32 arithmetic."""
    f32 = np.float32
    beams = [(f32(0.0), [], False)]  # (sum, tokens, finished): only beam 0 alive
    for _ in range(max_length):
        if all(finished for _, _, finished in beams):
            break
        candidates = []
        for total, tokens, finished in beams:
            if finished:
                candidates.append((total, tokens, True))
                continue
            prev = tokens[-1] if tokens else START
            for nxt in range(logp.shape[1]):
                candidates.append((f32(total + logp[prev, nxt]), tokens + [nxt], nxt == END))

        def score(c):
            return c[0] / f32(np.power(f32(len(c[1])), f32(alpha)))

        beams = sorted(candidates, key=lambda c: -score(c))[:beam_size]
    return [(tokens, len(tokens), float(score(c)), float(total), finished)
            for c in beams for total, tokens, finished in [c]]


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
def test_random_tables_match_python_reference(alpha):
    rng = np.random.default_rng(7)
    vocab = 7
    logits = rng.normal(scale=2.0, size=(4, vocab, vocab))
    logits[:, :, [PAD, START]] = -np.inf  # never generated
    logp = (logits - np.log(np.exp(logits).sum(-1, keepdims=True))).astype(np.float32)
    result = decode([0, 1, 2, 3], beam_size=3, max_length=6, alpha=alpha, tables=logp)
    check_attention(result)
    for b in range(4):
        expected = reference_beam_search(logp[b], 3, 6, alpha)
        for k, (tokens, length, score, total, finished) in enumerate(expected):
            got = hyp(result, b, k)
            assert got[0] == tokens and got[1] == length and got[4] == finished
            assert got[2] == pytest.approx(score, abs=1e-5)
            assert got[3] == pytest.approx(total, abs=1e-5)


# --- inside a Keras layer saved to .keras ---------------------------------------------------

@keras.saving.register_keras_serializable(package="tests_decoding")
class MarkovDecoder(keras.layers.Layer):
    """Input: table ids (B, 1) float; output: the best tokens (B, max_length)."""

    def __init__(self, beam_size=2, max_length=5, **kwargs):
        super().__init__(**kwargs)
        self.beam_size = beam_size
        self.max_length = max_length
        self.tables = self.add_weight(shape=TABLES.shape, initializer="zeros",
                                      trainable=False, name="tables")
        self.tables.assign(TABLES)

    def call(self, table_ids):
        table_ids = table_ids[:, 0]  # (B,)
        result = flat_search(markov_step_fn(self.tables), initial_state(table_ids),
                             tf.shape(table_ids)[0], beam_size=self.beam_size,
                             max_length=self.max_length, start_id=START, end_id=END,
                             attention_size=2)
        return result["tokens"][:, 0]  # (B, max_length)

    def get_config(self):
        return {**super().get_config(), "beam_size": self.beam_size,
                "max_length": self.max_length}


def test_inside_a_keras_model_saved_and_loaded(tmp_path):
    inputs = keras.Input(shape=(1,))
    model = keras.Model(inputs, MarkovDecoder()(inputs))
    ids = np.array([[0.0], [1.0], [2.0]], np.float32)
    # beam 2, alpha 0: GREEDY_TRAP -> [B end], SHORT_VS_LONG -> [end], FROZEN -> [end]
    expected = [[B, END, PAD, PAD, PAD], [END, PAD, PAD, PAD, PAD], [END, PAD, PAD, PAD, PAD]]
    np.testing.assert_array_equal(model.predict(ids, verbose=0), expected)
    path = tmp_path / "decoder.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_array_equal(loaded.predict(ids, verbose=0), expected)


def test_more_beams_than_vocabulary():
    # K = 7 > V = 5; by hand (GREEDY_TRAP, alpha 0) the best is still [B end] .36, then [A end]
    result = decode([0], beam_size=7, max_length=4)
    assert_hyp(result, 0, 0, [B, END], 0.36, True)
    assert_hyp(result, 0, 1, [A, END], 0.24, True)
    scores = result["scores"][0].numpy()
    assert np.all(np.diff(scores[np.isfinite(scores)]) <= 0)
    check_attention(result)


# --- compact: step_fn runs on the live rows only, same results ----------------------------

@pytest.mark.parametrize("ids, beam_size, max_length, alpha, tables", [
    ([0], 2, 5, 0.0, TABLES), ([1], 2, 6, 1.0, TABLES), ([2], 2, 3, 0.0, TABLES),
    ([2, 0, 1], 3, 5, 0.5, TABLES), ([0], 7, 4, 0.0, TABLES),  # more beams than vocabulary
    ([0], 3, 4, 0.0, table({START: {END: 1.0}})[None]),  # dead beams
])
def test_compact_equals_full(ids, beam_size, max_length, alpha, tables):
    full = decode(ids, beam_size, max_length, alpha, tables=tables)
    compact = decode(ids, beam_size, max_length, alpha, tables=tables, compact=True)
    for key in full:
        got, want = compact[key].numpy(), full[key].numpy()
        if key == "attention":  # dead beams (score -inf) carry no attention either way
            alive = np.isfinite(full["scores"].numpy())
            got, want = got[alive], want[alive]
        np.testing.assert_array_equal(got, want, key)
    check_attention(compact)


def test_compact_feeds_only_live_rows():
    # FROZEN, beam 2: step 0 extends beam 0 only; [end] finishes at step 1 and is never fed again
    seen = []
    result = decode([2], beam_size=2, max_length=4, compact=True, seen=seen)
    assert seen[0] == [0]
    assert all(len(rows) == 1 for rows in seen[1:]) and len(seen) == 4
    assert_hyp(result, 0, 0, [END], 0.45, True)


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_compact_random_tables_match_python_reference(alpha):
    rng = np.random.default_rng(11)
    vocab = 7
    logits = rng.normal(scale=2.0, size=(4, vocab, vocab))
    logits[:, :, [PAD, START]] = -np.inf
    logp = (logits - np.log(np.exp(logits).sum(-1, keepdims=True))).astype(np.float32)
    result = decode([0, 1, 2, 3], beam_size=3, max_length=6, alpha=alpha, tables=logp, compact=True)
    check_attention(result)
    for b in range(4):
        for k, (tokens, length, score, _total, finished) in enumerate(reference_beam_search(logp[b], 3, 6, alpha)):
            got = hyp(result, b, k)
            assert got[0] == tokens and got[1] == length and got[4] == finished
            assert got[2] == pytest.approx(score, abs=1e-5)


def test_compact_inside_tf_function_with_unknown_batch():
    step_fn = compact_step_fn(markov_step_fn(TABLES))

    def run(table_ids, compact=True):
        fn = step_fn if compact else markov_step_fn(TABLES)
        return flat_search(fn, initial_state(table_ids), tf.shape(table_ids)[0], beam_size=2, max_length=5,
                           start_id=START, end_id=END, alpha=1.0, attention_size=2, compact=compact)

    graph = tf.function(run, input_signature=[tf.TensorSpec([None], tf.float32)])
    ids = tf.constant([1.0, 2.0, 0.0, 2.0])
    traced, eager = graph(ids), run(ids, compact=False)
    for key in eager:
        np.testing.assert_array_equal(traced[key].numpy(), eager[key].numpy(), key)


# n-gram blocking: a chain that alternates A B A B ... (each step .9) and rarely ends.
#   no blocking, max_length 8: A B A B A B A B (unfinished)
#   n = 3: after A B A B the next A would repeat "A B A": B -> end (.06) beats B -> B (.04)
#   n = 2: after A B A the next B would repeat "A B": A -> end (.06) beats A -> A (.04)
#   n = 1: after A B the next A repeats "A": B -> end
ALTERNATING = table({START: {A: 1.0}, A: {B: 0.9, END: 0.06, A: 0.04}, B: {A: 0.9, END: 0.06, B: 0.04}})


@pytest.mark.parametrize("compact", [False, True])
@pytest.mark.parametrize("n, expected", [(0, [A, B, A, B, A, B, A, B]), (3, [A, B, A, B, END]),
                                         (2, [A, B, A, END]), (1, [A, B, END])])
def test_no_repeat_ngram_hand_worked(n, expected, compact):
    result = decode([0], beam_size=1, max_length=8, tables=ALTERNATING[None], compact=compact, no_repeat_ngram=n)
    tokens, length, _, log_prob, finished = hyp(result, 0, 0)
    assert tokens == expected and finished == (expected[-1] == END)
    probs = {(START, A): 1.0, (A, B): 0.9, (B, A): 0.9, (A, END): 0.06, (B, END): 0.06}
    assert log_prob == pytest.approx(sum(math.log(probs[p]) for p in zip([START] + expected, expected)), abs=1e-5)


@pytest.mark.parametrize("n", [2, 3])
def test_no_repeat_ngram_no_hypothesis_repeats(n):
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.full(V, 0.3), size=(4, V)).astype(np.float64)  # (4 inputs, V, V), peaked rows
    probs[:, :, END] *= 0.05  # long outputs, so repeats would happen
    probs[:, :, PAD] = 0.0
    probs /= probs.sum(-1, keepdims=True)
    with np.errstate(divide="ignore"):
        tables = np.log(probs).astype(np.float32)
    free = decode(list(range(4)), beam_size=3, max_length=12, tables=tables, compact=True)
    blocked = decode(list(range(4)), beam_size=3, max_length=12, tables=tables, compact=True, no_repeat_ngram=n)

    def repeats(result, b, k):
        tokens = hyp(result, b, k)[0]
        grams = [tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]
        return len(grams) - len(set(grams))

    alive = [(b, k) for b in range(4) for k in range(3) if np.isfinite(blocked["scores"][b, k])]
    assert alive and all(repeats(blocked, b, k) == 0 for b, k in alive)
    assert any(repeats(free, b, k) for b in range(4) for k in range(3))  # the case is not vacuous


def test_no_repeat_ngram_rejects_negative():
    with pytest.raises(ValueError, match="no_repeat_ngram"):
        decode([0], beam_size=1, max_length=4, tables=ALTERNATING[None], no_repeat_ngram=-1)


# A bonus of ln 2 on B (input 0 only) doubles B's probability until a hypothesis holds B:
#   input 0, greedy: step 1 [A] .6, [B] .4 * 2 = .8 -> B; step 2 from B: <end> .4, B .3 (held: no bonus,
#   else .6 would win), A .3 -> <end>.  [B end], sum ln(.8 * .4) = ln .32
#   input 1 (no bonus): [A end], ln .6
BONUS_TABLE = table({START: {A: 0.6, B: 0.4}, B: {END: 0.4, B: 0.3, A: 0.3}, A: {END: 1.0}})


@pytest.mark.parametrize("compact", [False, True])
def test_token_bonus_hand_worked_and_only_until_the_word_is_held(compact):
    bonus = np.zeros((2, V), np.float32)
    bonus[0, B] = math.log(2.0)
    result = decode([0, 0], beam_size=1, max_length=5, tables=BONUS_TABLE[None], compact=compact,
                    token_bonus=tf.constant(bonus))
    assert_hyp(result, 0, 0, [B, END], 0.32, True)
    assert_hyp(result, 1, 0, [A, END], 0.6, True)
    plain = decode([0, 0], beam_size=1, max_length=5, tables=BONUS_TABLE[None], compact=compact)
    assert hyp(plain, 0, 0)[0] == [A, END]  # the same search without a bonus


def test_token_bonus_through_the_compiled_generator_and_without_it():
    """The one Generator takes the bonus as one more input of its own compiled function, and
    decodes as before without it."""
    from captioner.decoding import Generator

    class Decoder:
        def prepare(self, annotations, mask, initial_state):
            return annotations, {"table": tf.zeros(tf.shape(annotations)[:1]), "code": tf.zeros(tf.shape(annotations)[:1]),
                                 "step": tf.zeros(tf.shape(annotations)[:1])}

        def step(self, tokens, state, memory):
            return markov_step_fn(BONUS_TABLE[None])(tokens, state)

    generator = Generator(Decoder(), lambda x: (x, None, None))
    x = tf.zeros((2, 2, 1))
    bonus = np.zeros((2, V), np.float32)
    bonus[1, B] = math.log(2.0)
    with_bonus = generator(x, beam_size=1, alpha=0.0, max_length=5, steering=Steering(token_bonus=bonus)).numpy()
    without = generator(x, beam_size=1, alpha=0.0, max_length=5).numpy()
    assert with_bonus["tokens"][1, 0, :2].tolist() == [B, END] and with_bonus["tokens"][0, 0, :2].tolist() == [A, END]
    assert without["tokens"][1, 0, :2].tolist() == [A, END]
    assert len(generator._compiled) == 2


def test_the_generator_keeps_a_bounded_number_of_compiled_functions():
    """Issue 40 item 3: every new alpha compiled (and kept) one more graph, without bound."""
    from captioner.decoding import Generator
    from captioner.decoding.generator import MAX_COMPILED

    class Decoder:
        def prepare(self, annotations, mask, initial_state):
            zeros = tf.zeros(tf.shape(annotations)[:1])
            return annotations, {"table": zeros, "code": zeros, "step": zeros}

        def step(self, tokens, state, memory):
            return markov_step_fn(BONUS_TABLE[None])(tokens, state)

    generator = Generator(Decoder(), lambda x: (x, None, None))
    x = tf.zeros((1, 2, 1))
    first = generator(x, beam_size=1, alpha=0.0, max_length=3).numpy()
    for i in range(MAX_COMPILED + 4):
        generator(x, beam_size=1, alpha=0.01 * (i + 1), max_length=3)
    assert len(generator._compiled) == MAX_COMPILED
    np.testing.assert_array_equal(generator(x, beam_size=1, alpha=0.0, max_length=3).numpy()["tokens"], first["tokens"])


# --- constrained beam search (Anderson et al. 2017) ----------------------------------------

@pytest.mark.parametrize("compact", [False, True])
def test_constraints_hand_worked(compact):
    """Input 0 must use B: [A end] (.6) is the better sentence, [B end] (.4 * .4 = .16) the best
    that holds B. Input 1's constraint is absent (-1 only): it decodes as without constraints."""
    constraints = tf.constant([[[B]], [[-1]]], tf.int32)  # (2, C=1, D=1)
    result = decode([0, 0], beam_size=1, max_length=5, tables=BONUS_TABLE[None], compact=compact,
                    constraints=constraints)
    assert_hyp(result, 0, 0, [B, END], 0.16, True)
    assert_hyp(result, 1, 0, [A, END], 0.6, True)
    assert result["tokens"].shape[1] == 1  # K hypotheses per input, not K * 2 ** C
    assert result["constraints_met"].numpy().tolist() == [[1], [1]]


def brute_force_constrained(logp, max_length, alpha, constraints):
    """Every sequence up to max_length (ended by <end>, or cut at max_length) that meets every
    constraint (a set of ids, any one of them), best first: (tokens, score, log_prob)."""
    f32 = np.float32
    out, frontier = [], [([], f32(0.0))]
    for _ in range(max_length):
        grown = []
        for tokens, total in frontier:
            prev = tokens[-1] if tokens else START
            for nxt in range(logp.shape[1]):
                if logp[prev, nxt] == -np.inf:
                    continue
                seq, s = tokens + [nxt], f32(total + logp[prev, nxt])
                (out if nxt == END or len(seq) == max_length else grown).append((seq, s))
        frontier = grown
    kept = [(seq, float(s / f32(np.power(f32(len(seq)), f32(alpha)))), float(s)) for seq, s in out
            if all(any(i in seq for i in c) for c in constraints)]
    return sorted(kept, key=lambda x: -x[1])


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_constrained_search_finds_the_best_sentence_that_meets_every_constraint(alpha):
    """A beam wide enough to hold every prefix makes the constrained search exact: its best
    hypothesis is the best of all sequences that meet each (disjunctive) constraint."""
    rng = np.random.default_rng(3)
    vocab = 7
    logits = rng.normal(scale=2.0, size=(3, vocab, vocab))
    logits[:, :, [PAD, START]] = -np.inf
    logp = (logits - np.log(np.exp(logits).sum(-1, keepdims=True))).astype(np.float32)
    # input 0: 5 and (3 or 6); input 1: 4 only (the second constraint absent); input 2: none
    constraints = np.array([[[5, -1], [3, 6]], [[4, -1], [-1, -1]], [[-1, -1], [-1, -1]]], np.int32)
    wanted = [[{5}, {3, 6}], [{4}], []]
    for compact in (False, True):
        result = decode([0, 1, 2], beam_size=125, max_length=3, alpha=alpha, tables=logp, compact=compact,
                        constraints=tf.constant(constraints))
        for b in range(3):
            best = brute_force_constrained(logp[b], 3, alpha, wanted[b])[0]
            tokens, length, score, log_prob, finished = hyp(result, b, 0)
            assert tokens == best[0]
            assert score == pytest.approx(best[1], abs=1e-5) and log_prob == pytest.approx(best[2], abs=1e-5)
            assert int(result["constraints_met"][b, 0]) == 2


def test_constrained_hypotheses_hold_their_constraints_and_compact_equals_full():
    rng = np.random.default_rng(11)
    vocab = 9
    logits = rng.normal(scale=2.0, size=(4, vocab, vocab))
    logits[:, :, [PAD, START]] = -np.inf
    logp = (logits - np.log(np.exp(logits).sum(-1, keepdims=True))).astype(np.float32)
    constraints = tf.constant([[[7], [8]], [[3], [-1]], [[8], [4]], [[-1], [-1]]], tf.int32)
    full = decode([0, 1, 2, 3], beam_size=3, max_length=8, alpha=0.5, tables=logp, constraints=constraints)
    compact = decode([0, 1, 2, 3], beam_size=3, max_length=8, alpha=0.5, tables=logp, constraints=constraints,
                     compact=True)
    check_attention(full)
    for key in ("tokens", "lengths", "finished", "constraints_met"):
        np.testing.assert_array_equal(full[key], compact[key])
    np.testing.assert_allclose(full["scores"], compact["scores"], atol=1e-5)
    for b, needed in enumerate([[7, 8], [3], [8, 4], []]):
        for k in range(3):
            tokens = hyp(full, b, k)[0]
            if int(full["constraints_met"][b, k]) == 2:
                assert all(t in tokens for t in needed), (b, k, tokens)
        assert int(full["constraints_met"][b, 0]) == 2  # reachable in 8 steps: the best meets all


def test_constraints_are_checked():
    with pytest.raises(ValueError, match="constraints must be"):
        decode([0], beam_size=2, max_length=3, constraints=tf.zeros((1, 2), tf.int32))
    with pytest.raises(ValueError, match="at most"):
        decode([0], beam_size=2, max_length=3, constraints=tf.zeros((1, 5, 1), tf.int32))
    with pytest.raises(ValueError, match="sampling"):
        decode([0], beam_size=1, max_length=3, constraints=tf.zeros((1, 1, 1), tf.int32), temperature=1.0)


def test_constraints_through_the_compiled_generator():
    """The Generator finds each input's memory by row with 2 ** C beams per beam, compiles one
    function per constraint shape, and decodes as before without constraints."""
    from captioner.decoding import Generator

    class Decoder:
        def prepare(self, annotations, mask, initial_state):
            zeros = tf.zeros(tf.shape(annotations)[:1])
            return annotations, {"table": annotations[:, 0, 0], "code": zeros, "step": zeros}

        def step(self, tokens, state, memory):
            tf.debugging.assert_equal(memory[:, 0, 0], state["table"])  # each row got its own input's memory
            return markov_step_fn(np.stack([BONUS_TABLE, GREEDY_TRAP]))(tokens, state)

    generator = Generator(Decoder(), lambda x: (x, None, None))
    x = tf.constant([0.0, 1.0, 0.0])[:, None, None] * tf.ones((3, 2, 1))
    constraints = np.array([[[B]], [[A]], [[-1]]], np.int32)
    out = generator(x, beam_size=2, alpha=0.0, max_length=5, steering=Steering(constraints=constraints)).numpy()
    assert out["tokens"][0, 0, :2].tolist() == [B, END]
    assert A in out["tokens"][1, 0].tolist()
    assert out["tokens"][2, 0, :2].tolist() == [A, END]
    plain = generator(x, beam_size=2, alpha=0.0, max_length=5).numpy()
    assert plain["tokens"][0, 0, :2].tolist() == [A, END] and "constraints_met" not in plain
    generator(x, beam_size=2, alpha=0.0, max_length=5, steering=Steering(constraints=np.zeros((3, 2, 1), np.int32) - 1))
    assert len(generator._compiled) == 3


DEADLINE_TABLE = table({START: {A: 0.9, B: 0.1}, A: {B: 0.5, END: 0.5}, B: {END: 1.0}})


@pytest.mark.parametrize("compact", [False, True])
def test_constraint_deadline_puts_the_word_first(compact):
    """B is best placed second ([A B end] .45); with a deadline of 1 token it must come first
    ([B end] .1). An input without constraints is not affected by the deadline."""
    constraints = tf.constant([[[B]], [[-1]]], tf.int32)
    anywhere = decode([0, 0], beam_size=2, max_length=4, tables=DEADLINE_TABLE[None], compact=compact,
                      constraints=constraints)
    assert_hyp(anywhere, 0, 0, [A, B, END], 0.45, True)
    first = decode([0, 0], beam_size=2, max_length=4, tables=DEADLINE_TABLE[None], compact=compact,
                   constraints=constraints, constraint_deadline=1)
    assert_hyp(first, 0, 0, [B, END], 0.1, True)
    assert hyp(first, 1, 0) == hyp(anywhere, 1, 0)


@pytest.mark.parametrize("compact", [False, True])
@pytest.mark.parametrize("as_tensor", [False, True])
def test_constraint_deadline_per_input(compact, as_tensor):
    """Each input its own deadline (0: anywhere): the first puts B first, the second where it is
    best, the third (no constraint) is as without any deadline; equal deadlines give what the
    int gives."""
    constraints = tf.constant([[[B]], [[B]], [[-1]]], tf.int32)
    deadlines = tf.constant([1, 0, 1], tf.int32) if as_tensor else np.array([1, 0, 1], np.int32)
    run = functools.partial(decode, [0, 0, 0], beam_size=2, max_length=4, tables=DEADLINE_TABLE[None],
                            compact=compact, constraints=constraints)
    each, anywhere, first = run(constraint_deadline=deadlines), run(), run(constraint_deadline=1)
    assert_hyp(each, 0, 0, [B, END], 0.1, True)
    assert_hyp(each, 1, 0, [A, B, END], 0.45, True)
    assert hyp(each, 2, 0) == hyp(anywhere, 2, 0)
    same = run(constraint_deadline=[1, 1, 1])
    assert all(hyp(same, b, k) == hyp(first, b, k) for b in range(3) for k in range(2))
    with pytest.raises(ValueError, match="constraint_deadline must be >= 0"):
        run(constraint_deadline=-1)
