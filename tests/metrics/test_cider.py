"""CIDEr-D hand checks (coco-caption definition)."""

import math

import pytest

from captioner.errors import InputError
from captioner.metrics import corpus_cider


def test_identical_corpus_scores_ten_per_item():
    refs = [["a b c d e", "a b c d e"], ["f g h i j"]]
    mean, scores = corpus_cider(refs, ["a b c d e", "f g h i j"])
    assert scores == pytest.approx([10.0, 10.0])
    assert mean == pytest.approx(10.0)


def test_hand_worked_two_item_case():
    # N = 2 items; every n-gram occurs in one item's references, so idf = ln 2 everywhere.
    # Item 1: hyp "a" vs ref "a b": unigram cosine = ln2*ln2 / (ln2 * sqrt(2) ln2) = 1/sqrt(2),
    #   no bigrams in the hyp -> 0 for n = 2..4; bigram counts differ by 1 -> exp(-1/72).
    # Item 2: hyp == ref "c d": cosine 1 for n = 1, 2; no 3/4-grams -> 0.
    mean, scores = corpus_cider([["a b"], ["c d"]], ["a", "c d"])
    item1 = (1 / math.sqrt(2)) / 4 * math.exp(-1 / 72) * 10
    item2 = 2 / 4 * 10
    assert scores == pytest.approx([item1, item2])
    assert mean == pytest.approx((item1 + item2) / 2)


def test_ngrams_in_every_item_carry_no_weight():
    # "a" occurs in both items' references: idf = 0, so only "b"/"c" and bigrams count.
    _, scores = corpus_cider([["a b"], ["a c"]], ["a", "a c"])
    assert scores[0] == 0.0  # the hypothesis only says the uninformative word
    assert scores[1] > 0.0


def test_clipping_limits_repeated_ngrams():
    _, repeated = corpus_cider([["x y"], ["dog cat"]], ["x y", "dog dog dog dog"])
    _, once = corpus_cider([["x y"], ["dog cat"]], ["x y", "dog"])
    assert repeated[1] < once[1]


def test_single_item_scores_zero():
    assert corpus_cider([["a b c"]], ["a b c"])[0] == 0.0


def test_averaged_over_references():
    _, one = corpus_cider([["a b"], ["c d"]], ["a b", "c d"])
    _, two = corpus_cider([["a b", "x y"], ["c d"]], ["a b", "c d"])
    assert two[0] == pytest.approx(one[0] / 2)


def test_input_errors():
    with pytest.raises(InputError):
        corpus_cider([], [])
    with pytest.raises(InputError):
        corpus_cider([[]], ["a"])
    with pytest.raises(InputError):
        corpus_cider([["a"]], ["a", "b"])


# -- CiderD: document frequencies from a fixed corpus (the training references) ----------------

def test_fixed_corpus_scorer_hand_worked():
    from captioner.metrics import CiderD

    # df corpus: 4 documents. "a" in all 4 (idf 0), "dog" in 2 (idf ln 2), "cat" in 1 (idf ln 4),
    # bigrams "a dog" in 2, "a cat" in 1; others absent (idf ln 4).
    corpus = [["a dog"], ["a dog runs"], ["a cat"], ["a bird"]]
    scorer = CiderD(corpus)
    assert scorer.documents == 4 and scorer.log_documents == pytest.approx(math.log(4))
    # hyp "a dog" vs ref "a dog": identical -> cosine 1 for n = 1, 2; no 3/4-grams -> (1 + 1) / 4 * 10
    assert scorer.score("a dog", ["a dog"]) == pytest.approx(5.0)
    # hyp "a cat" vs ref "a dog": unigram "a" has idf 0, "cat" and "dog" do not match -> 0
    assert scorer.score("a cat", ["a dog"]) == 0.0
    # hyp "a dog" vs ref "a dog runs": unigrams h = (0, ln2), r = (0, ln2, ln4 ["runs": df 1]):
    #   cos1 = ln2^2 / (ln2 * sqrt(ln2^2 + ln4^2)); bigrams h = {a dog: ln2}, r = {a dog: ln2,
    #   dog runs: ln4}: cos2 = the same value; bigram counts 1 vs 2 -> exp(-1/72)
    l2, l4 = math.log(2), math.log(4)
    cos = l2 / math.sqrt(l2 ** 2 + l4 ** 2)
    want = 2 * cos / 4 * math.exp(-1 / 72) * 10
    assert scorer.score("a dog", ["a dog runs"]) == pytest.approx(want)
    # averaged over references; prepared references give the same score
    assert scorer.score("a dog", ["a dog", "a dog runs"]) == pytest.approx((5.0 + want) / 2)
    prepared = scorer.prepare(["a dog", "a dog runs"])
    assert scorer.score("a dog", prepared) == pytest.approx((5.0 + want) / 2)
    assert scorer.scores(["a dog", "a cat"], [prepared, ["a dog"]]) == pytest.approx([(5.0 + want) / 2, 0.0])


def test_fixed_corpus_equals_corpus_cider_on_the_same_references():
    from captioner.metrics import CiderD

    refs = [["a man rides a horse", "a person on a horse"], ["two dogs play in the snow", "dogs in snow"],
            ["a child eats cake", "a kid with a cake"]]
    hyps = ["a man on a horse", "a dog in the snow", "a child with cake"]
    _, want = corpus_cider(refs, hyps)
    assert CiderD(refs).scores(hyps, refs) == pytest.approx(want)


def _sample_corpus(images=60, seed=0):
    """Captions of a small made-up world (some shared words, some rare), 5 references each."""
    import numpy as np

    rng = np.random.default_rng(seed)
    who = ["a man", "a woman", "a dog", "two dogs", "a child", "a girl", "a boy", "people"]
    what = ["runs", "is running", "plays", "jumps over a log", "sits", "is standing", "swims"]
    where = ["on the beach", "in the snow", "in a field", "on grass", "in the water", "near a tree", ""]
    def caption():
        return " ".join(x for x in (who[rng.integers(len(who))], what[rng.integers(len(what))],
                                    where[rng.integers(len(where))]) if x)
    refs = [[caption() for _ in range(5)] for _ in range(images)]
    hyps = [caption() if i % 3 else refs[i][0] for i in range(images)]
    return refs, hyps


def test_fixed_corpus_agrees_with_pycocoevalcap_per_image():
    Cider = pytest.importorskip("pycocoevalcap.cider.cider").Cider
    from captioner.metrics import CiderD

    refs, hyps = _sample_corpus()
    mean, per_image = Cider().compute_score({i: r for i, r in enumerate(refs)}, {i: [h] for i, h in enumerate(hyps)})
    ours = CiderD(refs).scores(hyps, refs)
    assert ours == pytest.approx([float(x) for x in per_image], rel=1e-9, abs=1e-12)
    assert sum(ours) / len(ours) == pytest.approx(float(mean))
    assert max(ours) > 1.0  # a real spread of scores, not all zeros
