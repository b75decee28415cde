"""WUPS, the Wu-Palmer set score of Malinowski and Fritz (2014), as COCO-QA reports it.

For a predicted answer set A and a ground-truth set T (here one word each),

    WUPS(A, T) = min( prod_{a in A} max_{t in T} mu(a, t),  prod_{t in T} max_{a in A} mu(a, t) )

and the score of a question set is the mean over its questions. ``mu`` is the Wu-Palmer
similarity of the two words in WordNet, thresholded: ``mu = WUP(a, t)`` when
``WUP(a, t) >= threshold``, else ``0.1 * WUP(a, t)``. At threshold 0.9 only near-synonyms
count ("two" ~ "three" = 0.90, "dog" ~ "cat" = 0.86 does not); at 0.0 every pair scores its
raw similarity. ``WUP(a, t)`` is 1 for the same word; otherwise the largest
``2 depth(lcs) / (depth(s_a) + depth(s_t))`` over the noun senses of the two words (NLTK's
``wup_similarity``; the senses as the authors' script takes them), and 0 when either word has
no noun sense.
"""

from __future__ import annotations

import functools

__all__ = ["wup", "wups", "wups_pair", "WordNetSimilarity"]


class WordNetSimilarity:
    """``sim(a, b)``: the word-level Wu-Palmer similarity of the module docstring, cached."""

    def __init__(self, wordnet=None):
        if wordnet is None:
            from captioner.text.wordnet import load_wordnet

            wordnet, reason = load_wordnet()
            if wordnet is None:
                raise RuntimeError(f"WUPS needs WordNet: {reason}")
        self.wordnet = wordnet
        self._cached = functools.lru_cache(maxsize=100_000)(self._compute)

    def _compute(self, a, b):
        sa, sb = self.wordnet.synsets(a, pos="n"), self.wordnet.synsets(b, pos="n")
        best = 0.0
        for x in sa:
            for y in sb:
                best = max(best, x.wup_similarity(y) or 0.0)
        return float(best)

    def __call__(self, a, b):
        if a == b:
            return 1.0
        return self._cached(*sorted((a, b)))


def wup(a, b, similarity):
    """The Wu-Palmer similarity of two words (1 for the same word)."""
    return 1.0 if a == b else float(similarity(a, b))


def _mu(a, t, threshold, similarity):
    s = wup(a, t, similarity)
    return s if s >= threshold else 0.1 * s


def wups_pair(predicted, truth, threshold, similarity):
    """WUPS of one question: ``predicted`` and ``truth`` are a word or a list of words."""
    a = [predicted] if isinstance(predicted, str) else list(predicted)
    t = [truth] if isinstance(truth, str) else list(truth)
    if not a or not t:
        return 0.0
    forward, backward = 1.0, 1.0
    for x in a:
        forward *= max(_mu(x, y, threshold, similarity) for y in t)
    for y in t:
        backward *= max(_mu(x, y, threshold, similarity) for x in a)
    return min(forward, backward)


def wups(predicted, truths, threshold, similarity=None):
    """Mean WUPS (a fraction, 0..1) over questions; ``similarity`` defaults to WordNet's."""
    predicted, truths = list(predicted), list(truths)
    if len(predicted) != len(truths):
        raise ValueError(f"{len(predicted)} predictions for {len(truths)} ground truths")
    if not predicted:
        return 0.0
    similarity = similarity or WordNetSimilarity()
    return sum(wups_pair(p, t, threshold, similarity) for p, t in zip(predicted, truths)) / len(predicted)
