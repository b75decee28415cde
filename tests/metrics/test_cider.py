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
