"""WUPS (Malinowski and Fritz 2014) against hand-worked cases."""

import pytest

from captioner.metrics.wups import WordNetSimilarity, wups, wups_pair

# a hand-made similarity table: WUP(dog, cat) = 0.8, WUP(dog, puppy) = 0.95, WUP(red, blue) = 0.5
TABLE = {frozenset(("dog", "cat")): 0.8, frozenset(("dog", "puppy")): 0.95, frozenset(("red", "blue")): 0.5}


def sim(a, b):
    return TABLE.get(frozenset((a, b)), 0.0)


def test_single_words_hand_worked():
    assert wups_pair("dog", "dog", 0.9, sim) == 1.0                     # same word: 1
    assert wups_pair("puppy", "dog", 0.9, sim) == pytest.approx(0.95)    # above the threshold: WUP itself
    assert wups_pair("cat", "dog", 0.9, sim) == pytest.approx(0.08)      # below: 0.1 * 0.8
    assert wups_pair("cat", "dog", 0.0, sim) == pytest.approx(0.8)       # threshold 0: WUP itself
    assert wups_pair("red", "dog", 0.0, sim) == 0.0


def test_mean_over_questions_hand_worked():
    predicted, truths = ["dog", "cat", "red", "puppy"], ["dog", "dog", "blue", "dog"]
    # WUPS@0.9: (1 + 0.08 + 0.05 + 0.95) / 4 = 0.52 ; WUPS@0.0: (1 + 0.8 + 0.5 + 0.95) / 4 = 0.8125
    assert wups(predicted, truths, 0.9, sim) == pytest.approx(0.52)
    assert wups(predicted, truths, 0.0, sim) == pytest.approx(0.8125)
    # plain accuracy would be 1/4: WUPS only ever adds credit to near misses
    assert wups(predicted, truths, 0.9, sim) >= 0.25


def test_answer_sets_take_the_min_of_both_directions():
    # A = {dog, red}, T = {dog}: forward = mu(dog,dog) * mu(red,dog) = 1 * 0 = 0 -> 0
    assert wups_pair(["dog", "red"], ["dog"], 0.0, sim) == 0.0
    # A = {puppy}, T = {dog, cat}: forward = max(0.95, 0) = 0.95; backward = 0.95 * max(mu(puppy, cat)=0) = 0
    assert wups_pair(["puppy"], ["dog", "cat"], 0.0, sim) == 0.0
    # A = {dog, cat}, T = {cat, dog}: both products are 1
    assert wups_pair(["dog", "cat"], ["cat", "dog"], 0.9, sim) == 1.0


def test_length_mismatch_is_an_error():
    with pytest.raises(ValueError):
        wups(["a"], ["a", "b"], 0.9, sim)


def test_wordnet_dog_cat_hand_worked():
    """dog.n.01 and cat.n.01 meet at carnivore.n.01; with NLTK's depths (root = 1) carnivore is at
    12 and both dog and cat at 14, so WUP = 2 * 12 / (14 + 14) = 6/7."""
    try:
        similarity = WordNetSimilarity()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    assert similarity("dog", "cat") == pytest.approx(6 / 7)
    assert similarity("cat", "dog") == similarity("dog", "cat")
    assert similarity("dog", "dog") == 1.0
    assert similarity("dog", "xqzv") == 0.0  # no noun sense
    assert wups(["cat"], ["dog"], 0.9, similarity) == pytest.approx(0.1 * 6 / 7)
    assert wups(["cat"], ["dog"], 0.0, similarity) == pytest.approx(6 / 7)
