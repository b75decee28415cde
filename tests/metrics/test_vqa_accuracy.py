import pytest

from captioner.errors import InputError
from captioner.metrics.vqa_accuracy import exact_match_accuracy, normalize_answer, vqa_accuracy, vqa_score


def _answers(matching, other="cat", n=10):
    return ["dog"] * matching + [other] * (n - matching)


@pytest.mark.parametrize("matching, expected", [
    # m of 10 humans gave it. Leave-one-out over the 10 subsets of 9:
    (0, 0.0),
    (1, 0.3),   # 1 subset without it (0) + 9 subsets with 1 match (1/3): 9/3/10
    (2, 0.6),   # 2 x 1/3 + 8 x 2/3 = 6/3 -> /10
    (3, 0.9),   # 3 x 2/3 + 7 x 1 = 9 -> /10
    (4, 1.0),   # every subset keeps >= 3 matches
    (10, 1.0),
])
def test_leave_one_out_hand_cases(matching, expected):
    assert vqa_accuracy("dog", _answers(matching)) == pytest.approx(expected)


def test_hand_case_by_explicit_subsets():
    """Brute force over the ten 9-answer subsets of a mixed set, written out by hand."""
    humans = ["2", "2", "two", "3", "2 dogs", "2", "3", "3", "4", "3"]
    # normalised: "two" -> "2", so "2" is given by 4 humans -> 1.0; "3" by 4 -> 1.0
    assert vqa_accuracy("two", humans) == pytest.approx(1.0)
    # "4" once: 9 subsets keep it (1/3 each), 1 drops it (0) -> 0.3
    assert vqa_accuracy("4", humans) == pytest.approx(0.3)
    # "2 dogs" once, also 0.3; "1" never -> 0
    assert vqa_accuracy("2 dogs", humans) == pytest.approx(0.3)
    assert vqa_accuracy("1", humans) == 0.0


@pytest.mark.parametrize("raw, expected", [
    ("Yes", "yes"),
    ("yes.", "yes"),                 # a period not before a digit goes
    ("3.5", "3.5"),                  # a decimal point stays
    ("Two", "2"),                    # number words -> digits
    ("none", "0"),
    ("the dog", "dog"),              # articles go
    ("A red ball", "red ball"),
    ("dont", "don't"),               # contractions restored
    ("black/white", "black white"),  # punctuation inside a word separates
    ("black / white", "black white"),  # punctuation touching a space is deleted
    ("1,000", "1000"),               # digit comma: punctuation deleted
    ("  tennis\tracket\n", "tennis racket"),
    ("what's up?", "what's up"),
])
def test_normalisation(raw, expected):
    assert normalize_answer(raw) == expected


def test_normalisation_makes_answers_match():
    humans = ["Two", "2", "two.", "2", "2", "the 2", "three", "3", "3", "2"]
    assert vqa_accuracy("2", humans) == pytest.approx(1.0)  # seven humans said 2
    assert vqa_accuracy("Three", humans) == pytest.approx(0.9)  # three said 3


def test_single_reference_is_exact_match():
    assert vqa_accuracy("Circle", ["circle"]) == 1.0
    assert vqa_accuracy("square", ["circle"]) == 0.0


def test_corpus_score_and_errors():
    refs = {1: _answers(10), 2: _answers(1), 3: ["circle"]}
    out = vqa_score({1: "dog", 2: "dog", 3: "circle"}, refs)
    assert out["questions"] == 3
    assert out["accuracy"] == pytest.approx(100 * (1.0 + 0.3 + 1.0) / 3)
    with pytest.raises(InputError, match="no predicted answer"):
        vqa_score({1: "dog"}, refs)
    with pytest.raises(InputError, match="non-empty"):
        vqa_accuracy("dog", [])
    with pytest.raises(InputError, match="string"):
        vqa_accuracy(3, ["3"])
    assert exact_match_accuracy(["yes", "No", "red"], ["yes", "no", "blue"]) == pytest.approx(200 / 3)
