"""distinct-n (Li et al. 2016): the share of the n-grams of all generated responses that are
distinct, a measure of how varied the responses are (a model that answers everything with the
same sentence scores near 0)."""

from __future__ import annotations

__all__ = ["distinct_n"]


def distinct_n(texts, n: int) -> float:
    """Distinct n-grams / all n-grams over ``texts`` (strings, split at white space, lower-cased;
    or token lists). 0.0 when there is no n-gram at all."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    total, seen = 0, set()
    for text in texts:
        tokens = text.lower().split() if isinstance(text, str) else list(text)
        grams = [tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]
        total += len(grams)
        seen.update(grams)
    return len(seen) / total if total else 0.0
