"""CIDEr-D (Vedantam et al. 2015) as the coco-caption toolkit computes it.

For every item, hypothesis and each reference become tf-idf vectors over n-grams of
order n = 1..4 (term frequency = raw count; idf = ``log(N) - log(max(1, df))`` where
N is the number of evaluated items and df the number of items whose *references*
contain the n-gram, so the statistics come from the evaluated corpus itself). Per order
the similarity to one reference is

    sum over hypothesis n-grams of min(h, r) * r / (|h| * |r|)        (clipped cosine)

times a length penalty ``exp(-delta**2 / (2 * sigma**2))`` with sigma = 6. The item
score is the mean over orders, averaged over its references, times 10; the corpus score
is the mean over items. As in ``pycocoevalcap/cider/cider_scorer.py``, ``delta`` is the
difference of the two sentences' *bigram* counts (equal to the difference in words for
non-empty sentences), and a hypothesis n-gram absent from all references gets the full
idf ``log(N)``.

Inputs are token lists or whitespace-separated strings (already tokenized/lower-cased).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

from captioner.errors import InputError
from captioner.metrics.corpus import as_tokens, corpus_lists

__all__ = ["corpus_cider"]


def _all_ngrams(tokens: list[str], max_n: int) -> Counter:
    """Counts of all n-grams of orders 1..max_n (tuples)."""
    counts: Counter = Counter()
    for n in range(1, max_n + 1):
        for i in range(len(tokens) - n + 1):
            counts[tuple(tokens[i : i + n])] += 1
    return counts


def corpus_cider(references, hypotheses, n: int = 4, sigma: float = 6.0) -> tuple[float, list[float]]:
    """CIDEr-D of a corpus.

    Args:
        references: one non-empty list of references per item (tokens or strings).
        hypotheses: one candidate per item (tokens or a string).
        n: highest n-gram order.
        sigma: width of the Gaussian length penalty.

    Returns:
        ``(corpus score, per-item scores)``, on coco's scale (a hypothesis identical to
        all its references, with n-grams no other item has, scores 10).
    """
    references, hypotheses = corpus_lists(references, hypotheses, "corpus_cider")
    hyp_counts = [_all_ngrams(as_tokens(h), n) for h in hypotheses]
    ref_counts = []
    for i, refs in enumerate(references):
        if isinstance(refs, str) or not refs:
            raise InputError(f"item {i}: references must be a non-empty list of sentences")
        ref_counts.append([_all_ngrams(as_tokens(r), n) for r in refs])

    # Document frequency: in how many items' reference sets each n-gram occurs.
    doc_freq: Counter = Counter()
    for refs in ref_counts:
        doc_freq.update(set(gram for counts in refs for gram in counts))
    log_n_items = math.log(float(len(ref_counts)))

    def to_vector(counts: Counter):
        """Per-order tf-idf dicts, their norms, and the bigram count (coco's "length")."""
        vec = [defaultdict(float) for _ in range(n)]
        norm = [0.0] * n
        bigrams = 0
        for gram, tf in counts.items():
            order = len(gram) - 1
            weight = tf * (log_n_items - math.log(max(1.0, doc_freq[gram])))
            vec[order][gram] = weight
            norm[order] += weight * weight
            if order == 1:
                bigrams += tf
        return vec, [math.sqrt(x) for x in norm], bigrams

    def similarity(hyp, ref) -> list[float]:
        (vec_h, norm_h, len_h), (vec_r, norm_r, len_r) = hyp, ref
        penalty = math.exp(-((len_h - len_r) ** 2) / (2 * sigma**2))
        out = []
        for order in range(n):
            val = sum(min(w, vec_r[order].get(g, 0.0)) * vec_r[order].get(g, 0.0) for g, w in vec_h[order].items())
            if norm_h[order] != 0 and norm_r[order] != 0:
                val /= norm_h[order] * norm_r[order]
            out.append(val * penalty)
        return out

    scores = []
    for hyp, refs in zip(hyp_counts, ref_counts):
        hyp_vec = to_vector(hyp)
        total = [0.0] * n
        for ref in refs:
            for order, value in enumerate(similarity(hyp_vec, to_vector(ref))):
                total[order] += value
        scores.append(sum(total) / n / len(refs) * 10.0)
    return sum(scores) / len(scores), scores
