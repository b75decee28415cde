"""BLEU against the hand-worked examples of Papineni et al. (2002) and coco-caption conventions."""

import math

import pytest

from captioner.errors import InputError
from captioner.metrics import brevity_penalty, closest_ref_length, corpus_bleu, modified_precision, ngram_counts

# Papineni et al. 2002, section 2.1 (Example 1), period dropped, case kept.
CANDIDATE_1 = "It is a guide to action which ensures that the military always obeys the commands of the party".split()
REFERENCES_1 = [
    "It is a guide to action that ensures that the military will forever heed Party commands".split(),
    "It is the guiding principle which guarantees the military forces always being under the command of the Party".split(),
    "It is the practical guide for the army always to heed the directions of the party".split(),
]


def test_ngram_counts():
    assert ngram_counts(["a", "b", "a", "b"], 2) == {("a", "b"): 2, ("b", "a"): 1}
    assert ngram_counts(["a"], 2) == {}


def test_papineni_the_the_the():
    candidate = "the the the the the the the"
    references = ["the cat is on the mat", "there is a cat on the mat"]
    assert modified_precision(candidate, references, 1) == (2, 7)
    assert modified_precision(candidate, references, 2) == (0, 6)


def test_papineni_example_1_unigram_and_bigram():
    assert len(CANDIDATE_1) == 18
    assert modified_precision(CANDIDATE_1, REFERENCES_1, 1) == (17, 18)
    assert modified_precision(CANDIDATE_1, REFERENCES_1, 2) == (10, 17)


def test_modified_precision_rejects_bad_order():
    with pytest.raises(InputError):
        modified_precision("a", ["a"], 0)


def test_closest_reference_length_prefers_shorter_on_tie():
    assert closest_ref_length(5, [4, 6]) == 4
    assert closest_ref_length(5, [9, 6, 2]) == 6
    with pytest.raises(InputError):
        closest_ref_length(5, [])


def test_brevity_penalty_hand_cases():
    assert brevity_penalty(4, 6) == pytest.approx(math.exp(1 - 6 / 4))
    assert brevity_penalty(6, 6) == 1.0  # c == r: exp(0)
    assert brevity_penalty(7, 6) == 1.0
    assert brevity_penalty(0, 6) == 0.0


def test_corpus_bleu_hand_case_with_brevity_penalty():
    # "the cat sat" vs a 6-word reference: p1 = p2 = p3 = 1, no 4-grams, BP = exp(1 - 6/3).
    score = corpus_bleu([["the cat sat on the mat"]], ["the cat sat"])
    bp = math.exp(1 - 6 / 3)
    assert score.brevity_penalty == pytest.approx(bp)
    assert score.bleu[:3] == pytest.approx((bp, bp, bp))
    assert score.bleu[3] == 0.0  # no 4-gram at all: precision 0
    assert (score.hypothesis_length, score.reference_length) == (3, 6)


def test_corpus_bleu_sums_counts_over_the_corpus():
    refs = [["a b c d"], ["e f g h"]]
    score = corpus_bleu(refs, ["a b c d", "e f x y"])
    assert score.matches[:2] == (4 + 2, 3 + 1)
    assert score.totals[:2] == (8, 6)
    assert score.bleu[1] == pytest.approx(math.sqrt(6 / 8 * 4 / 6))


def test_perfect_match_is_one():
    refs = [["a dog runs on the grass", "a brown dog"], ["two kids play in the snow"]]
    score = corpus_bleu(refs, ["a dog runs on the grass", "two kids play in the snow"])
    assert score.bleu == pytest.approx((1.0, 1.0, 1.0, 1.0))


def test_corpus_bleu_input_errors():
    with pytest.raises(InputError):
        corpus_bleu([], [])
    with pytest.raises(InputError):
        corpus_bleu([["a"]], ["a", "b"])
    with pytest.raises(InputError):
        corpus_bleu([[]], ["a"])
    with pytest.raises(InputError):
        corpus_bleu(["a b"], ["a b"])  # references must be a list per item


def test_sentence_bleu_agrees_with_pycocoevalcap_per_image():
    Bleu = pytest.importorskip("pycocoevalcap.bleu.bleu").Bleu
    from captioner.metrics import SentenceBleu, sentence_bleu

    from tests.metrics.test_cider import _sample_corpus

    refs, hyps = _sample_corpus(images=80, seed=3)
    hyps[1] = "a"  # shorter than every reference: the brevity penalty, no bigram at all
    _, per_order = Bleu(4).compute_score({i: r for i, r in enumerate(refs)}, {i: [h] for i, h in enumerate(hyps)},
                                         verbose=0)
    scorer = SentenceBleu()
    ours = [scorer.score(h, scorer.prepare(r)) for h, r in zip(hyps, refs)]
    assert ours == pytest.approx([float(x) for x in per_order[3]], rel=1e-9, abs=1e-15)
    assert [sentence_bleu(h, r, max_n=2) for h, r in zip(hyps, refs)] == pytest.approx(
        [float(x) for x in per_order[1]], rel=1e-9, abs=1e-15)
    assert max(ours) == pytest.approx(1.0) and min(ours) < 1e-3  # exact copies score 1, misses almost 0


def test_sentence_bleu_hand_case_and_errors():
    from captioner.metrics import SentenceBleu, sentence_bleu

    # 6/6 unigrams, 4/5 bigrams, 3/4 trigrams, 2/3 4-grams (clipped per reference n-gram);
    # the closest reference has 5 words < 6: no brevity penalty
    hyp, refs = "a dog runs on the grass", ["a dog runs on grass", "the dog runs on the sand"]
    assert sentence_bleu(hyp, refs) == pytest.approx((1 * 4 / 5 * 3 / 4 * 2 / 3) ** 0.25, rel=1e-6)
    with pytest.raises(InputError, match="non-empty list"):
        sentence_bleu(hyp, [])
    with pytest.raises(InputError, match="non-empty list"):
        sentence_bleu(hyp, "a dog")
    with pytest.raises(InputError, match="order"):
        SentenceBleu(0)
