import pytest

from captioner.metrics.transliteration import (
    character_error_rate,
    edit_distance,
    top_k_accuracy,
    transliteration_scores,
)


@pytest.mark.parametrize("a, b, d", [
    ("", "", 0), ("abc", "", 3), ("", "ab", 2), ("kitten", "sitting", 3), ("flaw", "lawn", 2),
    ("इंडिया", "इंडिया", 0), ("इंडिया", "इन्डिया", 2),  # ं -> न्: one substitution, one insertion
])
def test_edit_distance_hand_worked(a, b, d):
    assert edit_distance(a, b) == d == edit_distance(b, a)


def test_top_k_accuracy_counts_any_acceptable_reference():
    predictions = [["अंकुड़", "अंकुर"], ["इन्डिया", "इंडिया", "इंडीया"], ["x"]]
    references = [{"अंकुर", "अंकुड़"}, {"इंडिया"}, {"y"}]
    assert top_k_accuracy(predictions, references, k=1) == pytest.approx(100 / 3)  # only the first
    assert top_k_accuracy(predictions, references, k=2) == pytest.approx(200 / 3)
    assert top_k_accuracy(predictions, references, k=5) == pytest.approx(200 / 3)


def test_cer_uses_the_closest_reference_and_reference_lengths():
    # input 1: "abd" vs refs {"abc" (1 edit, 3 chars), "abdd" (1 edit, 4 chars)}: the first of
    # the minimal (edits, length) pairs counts -> 1 edit over 3 chars;
    # input 2: no prediction: every reference character is an edit -> 2 over 2.
    assert character_error_rate([["abd"], []], [["abc", "abdd"], ["xy"]]) == pytest.approx(100 * 3 / 5)


def test_normalization_and_bad_arguments():
    decomposed = "\u0921\u093c"  # ड + nukta; U+095C (ड़ as one code point) is the same word after NFC
    assert top_k_accuracy([[decomposed]], [{"\u095c"}]) == 100.0
    with pytest.raises(ValueError, match="2 prediction lists for 1"):
        top_k_accuracy([["a"], ["b"]], [{"a"}])
    with pytest.raises(ValueError, match="no reference"):
        character_error_rate([["a"]], [set()])
    scores = transliteration_scores([["a", "b"]], [{"b"}])
    assert scores == {"top-1": 0.0, "top-5": 100.0, "CER": 100.0, "words": 1}
