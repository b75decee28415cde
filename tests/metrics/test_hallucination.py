"""CHAIR: object words a caption names that no reference of its image names."""

import pytest

from captioner.metrics.hallucination import OBJECT_SYNONYMS, caption_objects, chair


def test_objects_are_found_by_synonym_and_plural_once_each():
    assert caption_objects("A puppy chases two balls past a dog.") == ["dog", "ball"]
    assert caption_objects("Men ride bikes") == ["man", "bicycle"]
    assert caption_objects("a view of the sky") == []


def test_chair_counts_hallucinated_mentions_and_captions():
    refs = {"a": ["A dog runs on the grass.", "A puppy plays with a ball."],
            "b": ["A man rides a bicycle.", "A cyclist on a road."]}
    got = chair(refs, {"a": "a dog catches a frisbee", "b": "a man on a bike"})
    # a: dog (named), frisbee (hallucinated); b: man, bicycle (both named)
    assert got["mentions"] == 4 and got["hallucinated"] == 1
    assert got["CHAIR_i"] == pytest.approx(25.0) and got["CHAIR_s"] == pytest.approx(50.0)
    assert got["most_hallucinated"] == [("frisbee", 1)]
    assert chair(refs, {"a": "a puppy on the grass", "b": "a cyclist"})["CHAIR_s"] == 0.0


def test_no_word_names_two_objects():
    seen = {}
    for obj, words in OBJECT_SYNONYMS.items():
        for w in words:
            assert w not in seen, (w, obj, seen.get(w))
            seen[w] = obj
