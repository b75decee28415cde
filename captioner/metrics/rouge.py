"""ROUGE-L (Lin 2004) as the coco-caption toolkit computes it.

Per item: for each reference, the longest common subsequence (LCS) with the candidate
gives precision ``lcs / len(candidate)`` and recall ``lcs / len(reference)``; the best
precision and the best recall over the references (each maximised separately, as in
``pycocoevalcap/rouge/rouge.py``) are combined as
``F = (1 + beta**2) P R / (R + beta**2 P)`` with beta = 1.2. The corpus score is the mean
of the item scores.
"""

from __future__ import annotations

from collections.abc import Sequence

from captioner.errors import InputError
from captioner.metrics.corpus import as_tokens, corpus_lists

__all__ = ["lcs_length", "rouge_l", "corpus_rouge_l"]


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token sequences (O(len a * len b))."""
    if len(a) < len(b):
        a, b = b, a
    previous = [0] * (len(b) + 1)
    for token_a in a:
        current = [0]
        for j, token_b in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if token_a == token_b else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def rouge_l(candidate, references, beta: float = 1.2) -> float:
    """ROUGE-L F-measure of one candidate against its references, in [0, 1]."""
    if isinstance(references, str) or not references:
        raise InputError("rouge_l needs a non-empty list of references")
    cand = as_tokens(candidate)
    if not cand:
        return 0.0
    best_p = best_r = 0.0
    for reference in references:
        ref = as_tokens(reference)
        if not ref:
            continue
        lcs = lcs_length(ref, cand)
        best_p = max(best_p, lcs / len(cand))
        best_r = max(best_r, lcs / len(ref))
    if best_p == 0 or best_r == 0:
        return 0.0
    return (1 + beta**2) * best_p * best_r / (best_r + beta**2 * best_p)


def corpus_rouge_l(references, hypotheses, beta: float = 1.2) -> tuple[float, list[float]]:
    """Mean ROUGE-L over items; returns ``(mean, per-item scores)``."""
    references, hypotheses = corpus_lists(references, hypotheses, "corpus_rouge_l")
    scores = [rouge_l(h, refs, beta) for h, refs in zip(hypotheses, references)]
    return sum(scores) / len(scores), scores
