"""The n-best rescorer (captioner.decoding.rescoring) against hand-worked cases."""

import json
import math

import numpy as np
import pytest

from captioner.decoding.rescoring import FEATURES, LexiconRescorer, rescore_nbest, rescorer_from_config
from captioner.text.ngram_lm import KneserNeyLM


def test_hand_worked_known_word_and_count_reranking():
    # model scores: "ab" -1.0, "abc" -1.2, "x" -0.9 -> the beam's order is x, ab, abc
    r = LexiconRescorer({"abc": 3, "zz": 1}, lm_order=0, weights={"known": 0.5})
    scores = r.rescore(["ab", "abc", "x"], [-1.0, -1.2, -0.9])
    np.testing.assert_allclose(scores, [-1.0, -1.2 + 0.5, -0.9])  # -1.0, -0.7, -0.9
    order, combined = rescore_nbest(r, ["ab", "abc", "x"], [-1.0, -1.2, -0.9])
    assert order == [1, 2, 0]
    # log(1 + count) and a length penalty: "abc" -1.2 + 0.1 * log 4 - 0.2 * 3 = -1.6614
    r = LexiconRescorer([["abc", 3]], lm_order=0, weights={"log_count": 0.1, "length": -0.2, "model": 2.0})
    np.testing.assert_allclose(r.rescore(["abc", "x"], [-1.2, -0.9]),
                               [2 * -1.2 + 0.1 * math.log(4) - 0.6, 2 * -0.9 - 0.2], atol=1e-12)


def test_ties_keep_the_beams_order_and_features_are_in_order():
    r = LexiconRescorer(["a"], lm_order=0, weights={"model": 0.0})
    order, _ = rescore_nbest(r, ["c", "b", "a"], [-1.0, -2.0, -3.0])
    assert order == [0, 1, 2]
    f = r.features(["a", "bb"], [-1.0, -2.0])
    assert f.shape == (2, len(FEATURES))
    assert dict(zip(FEATURES, f[0])) == {"model": -1.0, "lm": 0.0, "lm_sum": 0.0, "known": 1.0,
                                         "log_count": math.log(2), "length": 1.0}


def test_lm_features_are_the_kneser_ney_log_probability_of_the_word():
    words = {"नमक": 2, "नमन": 1, "कमल": 1, "कलम": 5}
    r = LexiconRescorer(words, lm_order=3, weights={"lm": 1.0})
    lm = KneserNeyLM(3).fit([list(w) for w in sorted(words)], sentences=True)  # types: each word once
    for text in ("नमक", "कमन", "कमलम"):
        nll, count = lm.nll([list(text)], sentences=True)
        assert count == len(text) + 1
        f = dict(zip(FEATURES, r.features([text], [0.0])[0]))
        assert f["lm_sum"] == pytest.approx(-nll) and f["lm"] == pytest.approx(-nll / count)
    # characters never seen: finite (never -inf), far below a word of the list
    assert np.isfinite(r.lm_log_prob("xyz")) and r.lm_log_prob("xyz") < r.lm_log_prob("कमल") - 3
    # a seen word scores above a scramble of its letters
    assert r.rescore(["कलम", "लमक"], [0.0, 0.0])[0] > r.rescore(["कलम", "लमक"], [0.0, 0.0])[1]
    # counts: the LM can count each word as often as it was attested
    rc = LexiconRescorer(words, lm_order=3, lm_counts=True)
    lmc = KneserNeyLM(3).fit([list(w) for w in sorted(words) for _ in range(words[w])], sentences=True)
    assert rc.lm_log_prob("कलम") == pytest.approx(-lmc.nll([list("कलम")])[0])


def test_config_is_json_and_rebuilds_the_same_rescorer():
    r = LexiconRescorer({"b": 1, "a": 2}, lm_order=2, weights={"lm": 0.3, "known": 1.0}, lm_counts=True)
    config = json.loads(json.dumps(r.get_config()))
    assert config == {"kind": "lexicon_lm", "words": [["a", 2], ["b", 1]], "lm_order": 2, "lm_counts": True,
                      "weights": {"model": 1.0, "lm": 0.3, "known": 1.0}}
    again = rescorer_from_config(config)
    assert again.get_config() == r.get_config()
    cands = ["ab", "a", "ba", "c"]
    np.testing.assert_array_equal(again.rescore(cands, [-1, -2, -3, -4]), r.rescore(cands, [-1, -2, -3, -4]))
    assert rescorer_from_config(None) is None and rescorer_from_config(r) is r


def test_bad_configs_are_refused():
    with pytest.raises(ValueError, match="unknown rescorer feature"):
        LexiconRescorer(["a"], weights={"bogus": 1.0})
    with pytest.raises(ValueError, match="count"):
        LexiconRescorer({"a": 0})
    with pytest.raises(ValueError, match="non-empty"):
        LexiconRescorer([""])
    with pytest.raises(ValueError, match="finite"):
        LexiconRescorer(["a"], weights={"lm": float("nan")})
    with pytest.raises(ValueError, match="kind"):
        rescorer_from_config({"words": []})
