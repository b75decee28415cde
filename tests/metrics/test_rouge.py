"""ROUGE-L hand checks (coco-caption definition, beta = 1.2)."""

import pytest

from captioner.errors import InputError
from captioner.metrics import corpus_rouge_l, lcs_length, rouge_l


def test_lcs_length():
    assert lcs_length("a b c d".split(), "a c d".split()) == 3
    assert lcs_length("a x b y c z".split(), "a b c".split()) == 3
    assert lcs_length([], ["a"]) == 0
    assert lcs_length("the cat is on the mat".split(), "the cat sat on the mat".split()) == 5


def test_rouge_l_hand_case():
    # LCS("a b c", "a x b y c z") = 3: P = 3/3, R = 3/6.
    p, r, beta = 1.0, 0.5, 1.2
    expected = (1 + beta**2) * p * r / (r + beta**2 * p)
    assert rouge_l("a b c", ["a x b y c z"]) == pytest.approx(expected)
    assert expected == pytest.approx(2.44 * 0.5 / 1.94)


def test_precision_and_recall_are_maximised_separately():
    # Best P (1.0) comes from the long reference, best R (1.0) from the short one.
    assert rouge_l("a b c d", ["a b", "a b c d e f g h"]) == pytest.approx(1.0)


def test_no_overlap_and_empty():
    assert rouge_l("x y", ["a b"]) == 0.0
    assert rouge_l("", ["a b"]) == 0.0
    with pytest.raises(InputError):
        rouge_l("a", [])


def test_corpus_mean():
    mean, scores = corpus_rouge_l([["a b"], ["c d"]], ["a b", "x"])
    assert scores == [pytest.approx(1.0), 0.0]
    assert mean == pytest.approx(0.5)
    with pytest.raises(InputError):
        corpus_rouge_l([], [])
