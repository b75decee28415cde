"""Each strategy of the search alone (issue 70): the candidates it offers and the survivors it keeps."""

import numpy as np
import pytest
import tensorflow as tf

from captioner.decoding.strategies import BeamStrategy, Constrained, Sampling, strategy_for


def test_beam_strategy_offers_each_rows_k_best_and_keeps_each_inputs_k_best():
    s = BeamStrategy()
    assert s.rows(2) == 2 and s.width == 2
    np.testing.assert_array_equal(s.start(1, 2).numpy(), [[0.0, -np.inf]])  # beam 0 alone at first
    lp = tf.math.log(tf.constant([[0.1, 0.6, 0.3], [0.5, 0.2, 0.3]]))
    cand_lp, cand_tok, extra = s.candidates(lp, tf.range(2), tf.constant(0))
    assert extra is None and cand_tok.numpy().tolist() == [[1, 2], [0, 2]]
    best, sums = s.select(tf.reshape(cand_lp, [1, 4]), tf.ones([1, 4]), None, 1, 2)
    assert best.numpy().tolist() == [[0, 2]]  # 0.6 of row 0, 0.5 of row 1


def test_sampling_draws_one_token_per_row_reproducibly_and_needs_one_beam():
    s = Sampling(1.0, top_k=2, seed=5)
    assert s.rows(1) == 1
    with pytest.raises(ValueError, match="beam_size must be 1"):
        Sampling(1.0).rows(3)
    lp = tf.math.log(tf.constant([[0.1, 0.6, 0.3]] * 4))
    a = s.candidates(lp, tf.range(4), tf.constant(2))[1].numpy()
    b = Sampling(1.0, top_k=2, seed=5).candidates(lp, tf.range(4), tf.constant(2))[1].numpy()
    assert a.shape == (4, 1) and (a == b).all() and set(a.ravel()) <= {1, 2}  # top-2: never token 0
    assert (Sampling(0.0).candidates(lp, tf.range(4), tf.constant(0))[1].numpy() == 1).all()  # T = 0: argmax


def test_constrained_keeps_beams_per_subset_and_forces_the_constraint_ids():
    constraints = tf.constant([[[3, -1]]], tf.int32)  # one input, one constraint: token 3
    s = Constrained(constraints)
    assert s.rows(2) == 4 and s.width == 2 + 2  # 2 beams for each of 2 subsets; 2 best + 2 ids
    start = s.start(1, 4).numpy()
    assert np.isfinite(start[0, 0]) and np.isneginf(start[0, 1:]).all()
    lp = tf.math.log(tf.constant([[0.1, 0.5, 0.3, 0.05, 0.05]] * 4))
    cand_lp, cand_tok, groups = s.candidates(lp, tf.range(4), tf.constant(0))
    # rows 0, 1 have met nothing: their 2 best that are not 3, then the forced 3 (moving to subset 1)
    assert cand_tok.numpy()[0].tolist()[:3] == [1, 2, 3] and groups.numpy()[0, 0] == 1
    # rows 2, 3 met it already: no forced candidate any more
    assert np.isneginf(cand_lp.numpy()[2, 2:]).all()


def test_a_deadline_leaves_only_the_forced_candidates_when_it_has_come():
    s = Constrained(tf.constant([[[3, -1]]], tf.int32), deadline=1)
    s.rows(1), s.start(1, 2)
    lp = tf.math.log(tf.constant([[0.1, 0.5, 0.3, 0.05, 0.05]] * 2))
    cand_lp, cand_tok, _ = s.candidates(lp, tf.range(2), tf.constant(0))
    assert np.isneginf(cand_lp.numpy()[0, 0]) and cand_tok.numpy()[0, 1] == 3  # the first word must be it
    with pytest.raises(ValueError, match=">= 0"):
        Constrained(tf.constant([[[3]]]), deadline=-1)


def test_strategy_for_picks_by_the_settings():
    assert type(strategy_for()) is BeamStrategy
    assert type(strategy_for(temperature=0.5)) is Sampling
    assert type(strategy_for(constraints=np.zeros((1, 1, 1), np.int32))) is Constrained
    assert type(strategy_for(constraints=np.zeros((1, 0, 1), np.int32))) is BeamStrategy  # no constraint at all
    with pytest.raises(ValueError, match="need beam search"):
        strategy_for(temperature=1.0, constraints=np.zeros((1, 1, 1), np.int32))
