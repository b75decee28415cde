"""Transliteration metrics as the field reports them (NEWS shared tasks, Dakshina, IndicXlit).

Every input has a set of acceptable references (all native words the lexicon pairs with the
romanization) and a ranked n-best list of predictions:

* top-k accuracy: the share of inputs whose k best predictions contain an acceptable
  reference (top-1 is "word accuracy");
* character error rate (CER): character edit distance of the best prediction to the CLOSEST
  acceptable reference, summed over inputs and divided by the summed lengths of those
  references (so a long word weighs more than a short one, as in Roark et al. 2020).

Characters are Unicode code points after NFC normalization (a Devanagari conjunct such as
क्ष is three: क, virama, ष).
"""

from __future__ import annotations

import unicodedata

__all__ = ["edit_distance", "top_k_accuracy", "character_error_rate", "transliteration_scores"]


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions cost 1) between two strings."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))  # distances of a[:0] to every prefix of b
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1,                  # delete ca
                               current[j - 1] + 1,               # insert cb
                               previous[j - 1] + (ca != cb)))    # substitute (or match)
        previous = current
    return previous[-1]


def _nfc(s):
    return unicodedata.normalize("NFC", s)


def _check(predictions, references):
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} prediction lists for {len(references)} reference sets")
    if not predictions:
        raise ValueError("no inputs to score")
    for i, refs in enumerate(references):
        if not refs:
            raise ValueError(f"input {i} has no reference")


def top_k_accuracy(predictions, references, k=1) -> float:
    """Percentage of inputs whose ``k`` best predictions hold an acceptable reference.

    Args:
        predictions: per input, its predictions best first (a list of str; may be empty).
        references: per input, the acceptable native words (any iterable of str, non-empty).
    """
    _check(predictions, references)
    hits = sum(any(_nfc(p) in {_nfc(r) for r in refs} for p in preds[:k])
               for preds, refs in zip(predictions, references))
    return 100.0 * hits / len(predictions)


def character_error_rate(predictions, references) -> float:
    """Percentage: edits of each best prediction to its closest reference / reference characters."""
    _check(predictions, references)
    edits = chars = 0
    for preds, refs in zip(predictions, references):
        best = _nfc(preds[0]) if preds else ""
        distance, length = min((edit_distance(best, _nfc(r)), len(_nfc(r))) for r in refs)
        edits += distance
        chars += length
    return 100.0 * edits / max(chars, 1)


def transliteration_scores(predictions, references, ks=(1, 5)) -> dict:
    """``{"top-1": .., "top-5": .., "CER": .., "words": N}`` (percentages)."""
    scores = {f"top-{k}": top_k_accuracy(predictions, references, k) for k in ks}
    scores["CER"] = character_error_rate(predictions, references)
    scores["words"] = len(predictions)
    return scores
