"""distinct-n by hand."""

import pytest

from captioner.metrics.distinct import distinct_n


def test_distinct_by_hand():
    texts = ["a b a", "A b c"]
    # unigrams: a b a a b c -> {a, b, c} of 6; bigrams: ab ba ab bc -> {ab, ba, bc} of 4
    assert distinct_n(texts, 1) == pytest.approx(3 / 6) and distinct_n(texts, 2) == pytest.approx(3 / 4)
    assert distinct_n(["same"] * 4, 1) == 0.25 and distinct_n(["x"], 2) == 0.0 and distinct_n([], 1) == 0.0
    assert distinct_n([["a", "b"], ["a", "b"]], 2) == 0.5
    with pytest.raises(ValueError):
        distinct_n(texts, 0)


def test_caption_statistics_count_length_distinct_captions_and_words():
    from captioner.metrics.distinct import caption_statistics

    stats = caption_statistics(["a dog runs", "a dog runs", "A cat sleeps on the mat"])
    assert stats == {"dev_caption_length": (3 + 3 + 6) / 3, "dev_distinct_captions": 2.0, "dev_vocabulary": 8.0}
