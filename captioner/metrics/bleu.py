"""Corpus BLEU (Papineni et al. 2002) with the coco-caption toolkit's conventions.

Conventions (the same as ``pycocoevalcap/bleu/bleu_scorer.py``, so figures agree):

- Clipped n-gram counts: a candidate n-gram counts at most as often as it occurs in the
  single reference where it is most frequent.
- Counts (clipped matches, candidate n-grams) and lengths are summed over the corpus
  before dividing: this is corpus BLEU, not an average of sentence BLEUs.
- Effective reference length of a sentence: the reference length closest to the
  candidate length, the shorter one on a tie; summed over the corpus for the brevity
  penalty ``exp(1 - r / c)`` when ``c < r``.
- BLEU-n is the geometric mean of the modified precisions p1..pn (uniform weights),
  times the brevity penalty.

One deliberate difference: coco adds 1e-15 / 1e-9 to every fraction, so a corpus with
no matching 4-gram scores a tiny positive number there; here it is exactly 0.
No smoothing otherwise. Inputs are token lists; plain strings are split on whitespace.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from captioner.errors import InputError
from captioner.metrics.corpus import as_tokens, corpus_lists

__all__ = ["BleuScore", "ngram_counts", "modified_precision", "closest_ref_length", "brevity_penalty", "corpus_bleu",
           "SentenceBleu", "sentence_bleu"]


def ngram_counts(tokens: Sequence[str], n: int) -> Counter:
    """Counts of the n-grams (tuples of length ``n``) of ``tokens``."""
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def max_reference_counts(references, orders) -> Counter:
    """The clipping counts: each n-gram (of every order in ``orders``) mapped to its largest
    count in any one of ``references`` (token lists)."""
    max_ref: Counter = Counter()
    for reference in references:
        for n in orders:
            for gram, count in ngram_counts(reference, n).items():
                max_ref[gram] = max(max_ref[gram], count)
    return max_ref


def modified_precision(candidate, references, n: int) -> tuple[int, int]:
    """Clipped n-gram matches and candidate n-gram total for one sentence.

    Args:
        candidate: tokens (or a whitespace-separated string).
        references: a list of references, each tokens or a string.
        n: n-gram order.

    Returns:
        ``(numerator, denominator)``: the sum over candidate n-grams of
        ``min(count in candidate, max count in any one reference)``, and the number of
        candidate n-grams. Papineni et al.'s "the the the the the the the" example is
        ``(2, 7)`` for n=1.
    """
    if n < 1:
        raise InputError(f"n-gram order must be >= 1, got {n}")
    cand_counts = ngram_counts(as_tokens(candidate), n)
    max_ref = max_reference_counts([as_tokens(r) for r in references], (n,))
    numerator = sum(min(count, max_ref[gram]) for gram, count in cand_counts.items())
    return numerator, sum(cand_counts.values())


def closest_ref_length(candidate_length: int, reference_lengths: Sequence[int]) -> int:
    """The reference length closest to the candidate's (the shorter on a tie)."""
    if not reference_lengths:
        raise InputError("a candidate needs at least one reference")
    return min(reference_lengths, key=lambda r: (abs(r - candidate_length), r))


def brevity_penalty(candidate_length: float, reference_length: float) -> float:
    """``1`` if the candidate is longer than the reference, else ``exp(1 - r / c)`` (0 when c = 0)."""
    if candidate_length > reference_length:
        return 1.0
    if candidate_length == 0:
        return 0.0
    return math.exp(1.0 - reference_length / candidate_length)


@dataclass(frozen=True)
class BleuScore:
    """Corpus BLEU and the statistics it was computed from (scores in [0, 1]).

    Attributes:
        bleu: ``(BLEU-1, ..., BLEU-max_n)``, cumulative geometric means.
        precisions: modified precisions ``(p1, ..., p_max_n)``.
        matches / totals: clipped matches and candidate n-grams per order.
        brevity_penalty: the corpus brevity penalty.
        hypothesis_length / reference_length: summed candidate / effective reference lengths.
    """

    bleu: tuple[float, ...]
    precisions: tuple[float, ...]
    matches: tuple[int, ...]
    totals: tuple[int, ...]
    brevity_penalty: float
    hypothesis_length: int
    reference_length: int


def corpus_bleu(references, hypotheses, max_n: int = 4) -> BleuScore:
    """Corpus BLEU-1..``max_n`` of ``hypotheses`` against ``references``.

    Args:
        references: one list of references per hypothesis; each reference is tokens or
            a whitespace-separated string.
        hypotheses: one candidate per item, tokens or a string.
        max_n: highest n-gram order.

    Returns:
        A :class:`BleuScore`; ``score.bleu[3]`` is BLEU-4 in [0, 1].
    """
    references, hypotheses = corpus_lists(references, hypotheses, "corpus_bleu")
    matches = [0] * max_n
    totals = [0] * max_n
    hyp_len = ref_len = 0
    for i, (refs, hyp) in enumerate(zip(references, hypotheses)):
        if isinstance(refs, str) or not refs:
            raise InputError(f"item {i}: references must be a non-empty list of sentences")
        hyp_tokens = as_tokens(hyp)
        ref_tokens = [as_tokens(r) for r in refs]
        hyp_len += len(hyp_tokens)
        ref_len += closest_ref_length(len(hyp_tokens), [len(r) for r in ref_tokens])
        for n in range(1, max_n + 1):
            num, den = modified_precision(hyp_tokens, ref_tokens, n)
            matches[n - 1] += num
            totals[n - 1] += den
    precisions = [m / t if t else 0.0 for m, t in zip(matches, totals)]
    bp = brevity_penalty(hyp_len, ref_len)
    bleu = []
    log_sum = 0.0
    for n, p in enumerate(precisions, start=1):
        if p == 0.0 or log_sum == -math.inf:
            log_sum = -math.inf
            bleu.append(0.0)
        else:
            log_sum += math.log(p)
            bleu.append(bp * math.exp(log_sum / n))
    return BleuScore(
        bleu=tuple(bleu),
        precisions=tuple(precisions),
        matches=tuple(matches),
        totals=tuple(totals),
        brevity_penalty=bp,
        hypothesis_length=hyp_len,
        reference_length=ref_len,
    )


class SentenceBleu:
    """BLEU-``max_n`` of one candidate against its references, in [0, 1], as coco-caption's
    per-image list (``BleuScorer.compute_score``'s second value) computes it.

    Unlike :func:`corpus_bleu`, it keeps coco's smoothing, so a sentence without a matching
    4-gram scores a tiny positive number, not 0: each precision is
    ``(matches + 1e-15) / (candidates + 1e-9)``, and the brevity penalty uses the reference
    length closest to the candidate's. It is the per-caption BLEU reward of self-critical
    training (``captioner train caption --scst --scst-bleu-weight``), so references can be
    prepared once (their lengths and clipping counts) and scored against many candidates,
    like :class:`captioner.metrics.CiderD`'s ``prepare`` / ``score``.
    """

    def __init__(self, max_n: int = 4):
        if max_n < 1:
            raise InputError(f"n-gram order must be >= 1, got {max_n}")
        self.max_n = max_n

    def prepare(self, references) -> tuple:
        """references (tokens or strings) -> (their lengths, the max count of each n-gram in any one)."""
        if isinstance(references, str) or not references:
            raise InputError("sentence BLEU: references must be a non-empty list of sentences")
        refs = [as_tokens(r) for r in references]
        return tuple(len(r) for r in refs), max_reference_counts(refs, range(1, self.max_n + 1))

    def score(self, candidate, references) -> float:
        """BLEU of ``candidate`` against ``references``: a list of sentences or ``prepare``'s result."""
        lengths, max_ref = references if isinstance(references, tuple) else self.prepare(references)
        hyp = as_tokens(candidate)
        product = 1.0
        for n in range(1, self.max_n + 1):
            counts = ngram_counts(hyp, n)
            matches = sum(min(c, max_ref.get(g, 0)) for g, c in counts.items())
            product *= (matches + 1e-15) / (sum(counts.values()) + 1e-9)
        score = product ** (1.0 / self.max_n)
        ratio = (len(hyp) + 1e-15) / (closest_ref_length(len(hyp), lengths) + 1e-9)
        return score * math.exp(1.0 - 1.0 / ratio) if ratio < 1 else score


def sentence_bleu(candidate, references, max_n: int = 4) -> float:
    """:class:`SentenceBleu`'s score of one candidate against a list of references."""
    return SentenceBleu(max_n).score(candidate, references)
