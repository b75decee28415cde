"""Each rule of the search alone (issue 70): what it does to one step's log-probabilities."""

import numpy as np
import pytest
import tensorflow as tf

from captioner.decoding.beam_search import SearchSettings
from captioner.decoding.rules import BanTokens, NoRepeatNGram, StepView, TokenBonus, standard_rules

V = 6


def view(history, inputs=None, step=None):
    history = tf.constant(history, tf.int32)  # (M, T)
    step = int((history.numpy() != 0).sum(1).max()) if step is None else step
    inputs = tf.range(history.shape[0]) if inputs is None else tf.constant(inputs, tf.int32)
    return StepView(tf.constant(step), history, None, inputs, V)


def test_ban_tokens_puts_minus_infinity_at_the_ids_only_and_never_bans_end():
    lp = tf.zeros((2, V))
    out = BanTokens([0, 3]).__call__(lp, view([[1, 0], [2, 0]])).numpy()
    assert np.isneginf(out[:, [0, 3]]).all() and (out[:, [1, 2, 4, 5]] == 0).all()
    with pytest.raises(ValueError, match="cannot be banned"):
        BanTokens([2]).check(SearchSettings(1, 5, end_id=2))
    with pytest.raises(ValueError, match=">= 0"):
        BanTokens([-1])


def test_no_repeat_ngram_bans_only_the_token_that_would_repeat_a_held_ngram():
    # row 0 generated 3 4 3: the bigram (3, 4) is held, so after 3 the token 4 is banned
    # row 1 generated 4 5 5: (5, 5) is held, so after 5 the token 5 is banned (and only it)
    out = NoRepeatNGram(2)(tf.zeros((2, V)), view([[3, 4, 3, 0], [4, 5, 5, 0]], step=3)).numpy()
    assert np.isneginf(out[0, 4]) and np.isfinite(np.delete(out[0], 4)).all()
    assert np.isneginf(out[1, 5]) and np.isfinite(np.delete(out[1], 5)).all()
    one = NoRepeatNGram(1)(tf.zeros((1, V)), view([[3, 4, 0, 0]], step=2)).numpy()  # no token twice
    assert np.isneginf(one[0, [3, 4]]).all() and np.isfinite(one[0, [0, 1, 2, 5]]).all()
    with pytest.raises(ValueError):
        NoRepeatNGram(0)


def test_token_bonus_goes_to_each_rows_input_until_the_row_holds_the_word():
    bonus = np.zeros((2, V), np.float32)
    bonus[0, 4], bonus[1, 5] = 2.0, 3.0
    # rows 0, 1 belong to input 0 (row 1 already said 4); row 2 to input 1
    out = TokenBonus(bonus)(tf.zeros((3, V)), view([[1, 0], [4, 0], [1, 0]], inputs=[0, 0, 1])).numpy()
    assert out[0, 4] == 2.0 and out[1, 4] == 0.0 and out[2, 5] == 3.0
    assert out.sum() == 5.0


def test_standard_rules_are_in_the_searchs_order_and_only_when_asked():
    rules = standard_rules(3, np.zeros((1, V)), (0,))
    assert [type(r) for r in rules] == [NoRepeatNGram, TokenBonus, BanTokens]
    assert standard_rules() == []
    with pytest.raises(ValueError, match=">= 0"):
        standard_rules(-1)
