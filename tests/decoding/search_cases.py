"""Seeded cases for the search golden test (tests/decoding/test_search_goldens.py): a random "model"
whose next-token log-probabilities depend on the previous token and the input (a table per input),
and every rule of the search alone and together. The goldens were recorded with the search before it
became composable parts (issue 70), so the test proves the refactor changed no token."""

import numpy as np
import tensorflow as tf

V, B, T, R = 12, 3, 9, 4
START, END, PAD = 1, 2, 0


def tables(seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 2.0, (B, V, V)).astype(np.float32)
    logits[:, :, END] += 0.3
    return tf.nn.log_softmax(logits, -1)  # (B, V, V): input b, previous token -> next


def step_fn_for(K_rows, compact):
    logp = tables()

    def step(tokens, state, rows=None):
        inputs = (rows if compact else tf.range(tf.shape(tokens)[0])) // K_rows  # (M,)
        lp = tf.gather_nd(logp, tf.stack([inputs, tokens], 1))  # (M, V)
        attention = tf.nn.softmax(tf.cast(tf.stack([tf.cast(tokens, tf.float32)] * R, 1), tf.float32)
                                  * tf.range(1.0, R + 1.0), -1)
        return lp, state + 1, attention

    return step


CONSTRAINTS = np.array([[[5, 6], [7, -1]], [[8, -1], [-1, -1]], [[9, 10], [3, 4]]], np.int32)  # (B, C=2, D=2)
BONUS = np.zeros((B, V), np.float32)
BONUS[0, 5], BONUS[1, 7], BONUS[2, 11] = 3.0, 2.0, 4.0

CASES = {
    "beam3": dict(beam_size=3),
    "beam3_alpha": dict(beam_size=3, alpha=0.7),
    "greedy": dict(beam_size=1),
    "banned": dict(beam_size=3, banned_ids=(PAD, START, 4)),
    "ngram2": dict(beam_size=3, no_repeat_ngram=2, alpha=0.5),
    "ngram1": dict(beam_size=2, no_repeat_ngram=1),
    "bonus": dict(beam_size=3, token_bonus=BONUS, alpha=0.5),
    "constraints": dict(beam_size=2, constraints=CONSTRAINTS, alpha=0.5),
    "constraints_deadline": dict(beam_size=2, constraints=CONSTRAINTS, constraint_deadline=3),
    "constraints_per_input": dict(beam_size=2, constraints=CONSTRAINTS,
                                  constraint_deadline=np.array([0, 2, 4], np.int32)),
    "everything": dict(beam_size=3, constraints=CONSTRAINTS, constraint_deadline=np.array([3, 0, 2], np.int32),
                       token_bonus=BONUS, no_repeat_ngram=2, banned_ids=(PAD, START), alpha=0.8),
    "sample": dict(beam_size=1, temperature=1.0, seed=7),
    "sample_topk": dict(beam_size=1, temperature=0.7, top_k=3, seed=11, banned_ids=(PAD, START)),
    "start_tokens": dict(beam_size=2, start_tokens=np.array([3, 4, 5], np.int32)),
    "full_rows_beam3": dict(beam_size=3, alpha=0.7, compact=False),
    "full_rows_everything": dict(beam_size=3, constraints=CONSTRAINTS, constraint_deadline=np.array([3, 0, 2], np.int32),
                                 token_bonus=BONUS, no_repeat_ngram=2, banned_ids=(PAD, START), alpha=0.8,
                                 compact=False),
}


def rows_per_input(case):
    c = case.get("constraints")
    return case["beam_size"] * (2 ** c.shape[1] if c is not None else 1)


def run_case(case):
    kw = dict(case)
    compact = kw.pop("compact", True)
    step = step_fn_for(rows_per_input(case), compact)
    return flat_search(step, tf.zeros((B,), tf.int32), B, max_length=T, start_id=START, end_id=END, pad_id=PAD,
                       attention_size=R, compact=compact, **kw)


def flat_search(step_fn, initial_state, batch_size, *, beam_size, max_length, start_id, end_id, alpha=0.0,
                attention_size=None, pad_id=0, banned_ids=(), compact=False, no_repeat_ngram=0, start_tokens=None,
                temperature=None, top_k=0, seed=0, token_bonus=None, constraints=None, constraint_deadline=0):
    """The search from flat keywords (how the tests, and the search before issue 70, named its options):
    the settings, the rules and the strategy they stand for."""
    from captioner.decoding.beam_search import SearchSettings, beam_search
    from captioner.decoding.rules import standard_rules
    from captioner.decoding.strategies import strategy_for

    if not (constraints is not None or hasattr(constraint_deadline, "__len__")) and constraint_deadline < 0:
        raise ValueError(f"constraint_deadline must be >= 0, got {constraint_deadline}")
    return beam_search(step_fn, initial_state, batch_size,
                       SearchSettings(beam_size, max_length, alpha, start_id, end_id, pad_id),
                       rules=standard_rules(no_repeat_ngram, token_bonus, banned_ids),
                       strategy=strategy_for(temperature, top_k, seed, constraints, constraint_deadline),
                       start_tokens=start_tokens, attention_size=attention_size, compact=compact)


def flat_greedy(step_fn, initial_state, batch_size, **kw):
    return flat_search(step_fn, initial_state, batch_size, beam_size=1, **kw)
