"""Sampling (temperature, top-k) as a rule of the one search: the pure draw, and the search with it."""

import numpy as np
import pytest
import tensorflow as tf

from captioner.decoding import sample_tokens
from search_cases import flat_search, flat_greedy

P = np.array([0.5, 0.3, 0.15, 0.05])


def _draws(temperature, top_k, n=20000, seed=(1, 2)):
    log_probs = tf.math.log(tf.tile(tf.constant(P[None], tf.float32), [n, 1]))  # (n, V)
    lp, tok = sample_tokens(log_probs, temperature=temperature, top_k=top_k, seed=seed)
    return lp.numpy()[:, 0], tok.numpy()[:, 0]


def test_frequencies_follow_the_tempered_distribution():
    _, tok = _draws(1.0, 0)
    np.testing.assert_allclose(np.bincount(tok, minlength=4) / len(tok), P, atol=0.015)
    _, tok = _draws(0.5, 0)  # p^2, renormalized
    want = P ** 2 / (P ** 2).sum()
    np.testing.assert_allclose(np.bincount(tok, minlength=4) / len(tok), want, atol=0.015)
    lp, tok = _draws(1.0, 2)  # only the 2 most probable, renormalized: 0.5/0.8, 0.3/0.8
    np.testing.assert_allclose(np.bincount(tok, minlength=4) / len(tok), [0.625, 0.375, 0, 0], atol=0.015)
    np.testing.assert_allclose(lp, np.log(P[tok]), rtol=1e-6)  # the model's log-prob, not the tempered one


def test_zero_temperature_and_top1_are_the_argmax_and_seeds_repeat():
    rng = np.random.default_rng(0)
    log_probs = tf.nn.log_softmax(tf.constant(rng.normal(size=(50, 7)), tf.float32))
    argmax = np.argmax(log_probs.numpy(), -1)
    assert (sample_tokens(log_probs, temperature=0.0)[1].numpy()[:, 0] == argmax).all()
    assert (sample_tokens(log_probs, temperature=1.0, top_k=1, seed=(5, 0))[1].numpy()[:, 0] == argmax).all()
    a = sample_tokens(log_probs, temperature=1.0, seed=(7, 3))[1].numpy()
    b = sample_tokens(log_probs, temperature=1.0, seed=(7, 3))[1].numpy()
    c = sample_tokens(log_probs, temperature=1.0, seed=(8, 3))[1].numpy()
    assert (a == b).all() and (a != c).any()
    with pytest.raises(ValueError, match="temperature"):
        sample_tokens(log_probs, temperature=-1.0)
    with pytest.raises(ValueError, match="top_k"):
        sample_tokens(log_probs, temperature=1.0, top_k=-2)


# a toy model: the next-token distribution depends on the previous token (a random bigram table)
V, END = 6, 2
TABLE = tf.nn.log_softmax(tf.constant(np.random.default_rng(3).normal(size=(V, V)) * 2, tf.float32))


def step_fn(tokens, state, rows=None):
    return tf.gather(TABLE, tokens), state, None


def _search(**kw):
    out = flat_search(step_fn, tf.zeros((4, 1)), 4, beam_size=1, max_length=12, start_id=1, end_id=END,
                      compact=True, **kw)
    return out["tokens"].numpy()[:, 0], out["log_probs"].numpy()[:, 0]


def test_search_sampling_is_seeded_and_reduces_to_greedy():
    greedy = flat_greedy(step_fn, tf.zeros((4, 1)), 4, max_length=12, start_id=1, end_id=END, compact=True)
    greedy = greedy["tokens"].numpy()[:, 0]
    a, lp_a = _search(temperature=1.0, seed=11)
    b, lp_b = _search(temperature=1.0, seed=11)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(lp_a, lp_b)
    assert any((_search(temperature=1.0, seed=s)[0] != a).any() for s in range(12, 20))
    np.testing.assert_array_equal(_search(temperature=1e-4, seed=11)[0], greedy)  # T -> 0
    np.testing.assert_array_equal(_search(temperature=0.0)[0], greedy)
    np.testing.assert_array_equal(_search(temperature=1.7, top_k=1, seed=5)[0], greedy)
    # the four inputs draw independently
    many, _ = _search(temperature=2.0, seed=1)
    assert len({tuple(r) for r in many}) > 1
    with pytest.raises(ValueError, match="beam_size must be 1"):
        flat_search(step_fn, tf.zeros((4, 1)), 4, beam_size=2, max_length=5, start_id=1, end_id=END, temperature=1.0)


def test_sampled_log_probs_are_the_models_and_finished_rows_freeze():
    out = flat_search(step_fn, tf.zeros((4, 1)), 4, beam_size=1, max_length=12, start_id=1, end_id=END,
                      compact=True, temperature=1.3, seed=4)
    for row, n, total in zip(out["tokens"].numpy()[:, 0], out["lengths"].numpy()[:, 0], out["log_probs"].numpy()[:, 0]):
        prev, want = 1, 0.0
        for t in row[:n]:
            want += float(TABLE[prev, t])
            prev = t
        assert total == pytest.approx(want, rel=1e-5)
        assert (row[n:] == 0).all()  # frozen after <end>: pad
        assert n == 12 or row[n - 1] == END


def test_no_end_token_and_start_tokens():
    out = flat_search(step_fn, tf.zeros((2, 1)), 2, beam_size=1, max_length=9, start_id=1, end_id=None,
                      banned_ids=(0, 1, END), start_tokens=tf.constant([4, 5]), temperature=1.0, seed=3)
    assert (out["lengths"].numpy() == 9).all() and not out["finished"].numpy().any()
    tokens = out["tokens"].numpy()[:, 0]
    assert not np.isin(tokens, [0, 1, END]).any()
    first = flat_greedy(step_fn, tf.zeros((2, 1)), 2, max_length=1, start_id=1, end_id=None,
                          start_tokens=tf.constant([4, 5]))["tokens"].numpy()[:, 0, 0]
    np.testing.assert_array_equal(first, np.argmax(TABLE.numpy()[[4, 5]], -1))  # read from the given tokens
