"""Input handling the corpus metrics (BLEU, CIDEr-D, ROUGE-L) share."""

from __future__ import annotations

from captioner.errors import InputError

__all__ = ["as_tokens", "corpus_lists"]


def as_tokens(sentence) -> list[str]:
    """Token list from a token list or a whitespace-separated string."""
    return sentence.split() if isinstance(sentence, str) else list(sentence)


def corpus_lists(references, hypotheses, metric: str) -> tuple[list, list]:
    """(references, hypotheses) as lists, one reference list per hypothesis, at least one
    hypothesis; InputError (naming `metric`) otherwise."""
    references = list(references)
    hypotheses = list(hypotheses)
    if len(references) != len(hypotheses):
        raise InputError(f"{len(hypotheses)} hypotheses but {len(references)} reference lists")
    if not hypotheses:
        raise InputError(f"{metric} needs at least one hypothesis")
    return references, hypotheses
