"""The one hypothesis type and re-rank step after the beam search (captioner.decoding.hypotheses)."""

import math

import numpy as np

from captioner.decoding.hypotheses import Hypothesis, beam_hypotheses, rerank
from captioner.text import Vocabulary

VOCAB = Vocabulary(("<pad>", "<start>", "<end>", "<unk>", "a", "dog", "runs", "cat"))


def _out():
    # two inputs, three beams each; ids end with <end> (2) then <pad>
    tokens = np.array([[[4, 5, 6, 2], [4, 7, 2, 0], [5, 2, 0, 0]],
                       [[7, 6, 2, 0], [4, 2, 0, 0], [6, 6, 6, 6]]], np.int32)
    return {"tokens": tokens, "scores": np.array([[-0.5, -0.7, -np.inf], [-0.2, -0.9, -1.5]], np.float32),
            "log_probs": np.array([[-1.5, -1.4, -np.inf], [-0.6, -0.9, -6.0]], np.float32),
            "finished": np.array([[True, True, False], [True, True, False]])}


def test_beams_read_as_text_best_first():
    hyps = beam_hypotheses(_out(), 0, VOCAB)
    assert [h.text for h in hyps] == ["a dog runs", "a cat", "dog"]
    assert [h.words for h in hyps[:2]] == [["a", "dog", "runs"], ["a", "cat"]]
    assert hyps[0].score == -0.5 and hyps[0].log_prob == -1.5 and hyps[0].finished
    assert [h.text for h in beam_hypotheses(_out(), 0, VOCAB, live_only=True)] == ["a dog runs", "a cat"]
    assert not beam_hypotheses(_out(), 1, VOCAB)[2].finished


def test_an_exported_graphs_outputs_have_no_log_probs():
    out = {k: v for k, v in _out().items() if k in ("tokens", "scores")}
    [first, *_] = beam_hypotheses(out, 1, VOCAB)
    assert first.text == "cat runs" and math.isnan(first.log_prob) and first.finished


def test_rerank_by_coverage_is_stable_and_leaves_order_without_it():
    hyps = [Hypothesis("a", -1.0, ["a"]), Hypothesis("b", -0.5, ["b"]), Hypothesis("c", -1.0, ["c"])]
    assert [h.text for h in rerank(hyps)[0]] == ["a", "b", "c"]  # beta 0: the beam's order
    ranked, model_scores = rerank(hyps, coverage=0.3)
    assert [h.text for h in ranked] == ["b", "a", "c"] and model_scores is None  # ties keep their order


class _Rescorer:
    """Prefers short texts: combined = model score - length (a hand-checkable rule)."""

    def rescore(self, candidates, model_scores, source=None):
        assert source == "the input"
        return [s - len(c) for c, s in zip(candidates, model_scores)]


def test_rerank_with_a_rescorer_gives_new_scores_and_keeps_the_models():
    hyps = [Hypothesis("abcd", -0.1, []), Hypothesis("ab", -0.6, []), Hypothesis("abc", -0.2, [])]
    ranked, model_scores = rerank(hyps, rescorer=_Rescorer(), source="the input")
    assert [h.text for h in ranked] == ["ab", "abc", "abcd"]
    np.testing.assert_allclose([h.score for h in ranked], [-2.6, -3.2, -4.1])
    assert model_scores == [-0.6, -0.2, -0.1]
    assert rerank([], rescorer=_Rescorer()) == ([], None)
