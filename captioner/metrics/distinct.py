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


def caption_statistics(captions):
    """What a set of captions looks like: mean length in words, how many distinct captions, how
    many distinct words (self-critical training is known to shorten and narrow them). Keys as
    the caption recipe reports them on dev ("dev_caption_length", ...)."""
    from captioner.text import tokenize

    words = [tokenize(c) for c in captions]
    return {"dev_caption_length": sum(map(len, words)) / max(len(words), 1),
            "dev_distinct_captions": float(len({" ".join(w) for w in words})),
            "dev_vocabulary": float(len({t for w in words for t in w}))}
