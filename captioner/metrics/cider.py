"""CIDEr-D (Vedantam et al. 2015) as the coco-caption toolkit computes it.

For every item, hypothesis and each reference become tf-idf vectors over n-grams of
order n = 1..4 (term frequency = raw count; idf = ``log(N) - log(max(1, df))`` where N is
the number of documents of the df corpus and df the number of documents whose
*references* contain the n-gram). Per order the similarity to one reference is

    sum over hypothesis n-grams of min(h, r) * r / (|h| * |r|)        (clipped cosine)

times a length penalty ``exp(-delta**2 / (2 * sigma**2))`` with sigma = 6. The item
score is the mean over orders, averaged over its references, times 10; the corpus score
is the mean over items. As in ``pycocoevalcap/cider/cider_scorer.py``, ``delta`` is the
difference of the two sentences' *bigram* counts (equal to the difference in words for
non-empty sentences), and a hypothesis n-gram absent from all references gets the full
idf ``log(N)``.

Two uses, one implementation:

* :func:`corpus_cider` scores a corpus against itself (the df corpus is the evaluated
  items' references), as coco-caption's ``Cider`` does for reported figures;
* :class:`CiderD` fixes the df corpus once (e.g. every TRAINING image's references, as
  self-critical training does) and then scores any (hypothesis, references) pair quickly;
  :meth:`CiderD.prepare` turns references into their vectors once, for reuse.

Inputs are token lists or whitespace-separated strings (already tokenized/lower-cased).
"""

from __future__ import annotations

import math
from collections import Counter

from captioner.errors import InputError
from captioner.metrics.corpus import as_tokens, corpus_lists

__all__ = ["CiderD", "corpus_cider"]


def _all_ngrams(tokens: list[str], max_n: int) -> Counter:
    """Counts of all n-grams of orders 1..max_n (tuples)."""
    counts: Counter = Counter()
    for n in range(1, max_n + 1):
        for i in range(len(tokens) - n + 1):
            counts[tuple(tokens[i : i + n])] += 1
    return counts


class PreparedReferences(tuple):
    """The references of one item as CIDEr-D vectors (what :meth:`CiderD.prepare` returns)."""


class CiderD:
    """CIDEr-D with document frequencies from a fixed corpus of reference sets.

    Args:
        reference_sets: one non-empty list of references (tokens or strings) per document
            (image); the df of an n-gram is the number of documents whose references hold it,
            and N (the idf's ``log(N)``) is the number of documents.
        n: highest n-gram order.
        sigma: width of the Gaussian length penalty.

    ``score(hypothesis, references)`` is coco-caption's per-image CIDEr-D (x10) of one
    hypothesis, with this corpus's df whatever the references are.
    """

    def __init__(self, reference_sets, n: int = 4, sigma: float = 6.0):
        self.n, self.sigma = int(n), float(sigma)
        self.doc_freq: Counter = Counter()
        documents = 0
        for i, refs in enumerate(reference_sets):
            if isinstance(refs, str) or not refs:
                raise InputError(f"item {i}: references must be a non-empty list of sentences")
            grams = set()
            for r in refs:
                grams.update(_all_ngrams(as_tokens(r), self.n))
            self.doc_freq.update(grams)
            documents += 1
        if not documents:
            raise InputError("CIDEr-D needs at least one reference set for its document frequencies")
        self.documents = documents
        self.log_documents = math.log(float(documents))

    def vector(self, sentence):
        """(per-order tf-idf dicts, their norms, the bigram count: coco's "length")."""
        counts = _all_ngrams(as_tokens(sentence), self.n)
        vec = [{} for _ in range(self.n)]
        norm = [0.0] * self.n
        bigrams = 0
        log_n, df = self.log_documents, self.doc_freq
        for gram, tf in counts.items():
            order = len(gram) - 1
            weight = tf * (log_n - math.log(max(1.0, df.get(gram, 0))))
            vec[order][gram] = weight
            norm[order] += weight * weight
            if order == 1:
                bigrams += tf
        return vec, [math.sqrt(x) for x in norm], bigrams

    def prepare(self, references) -> PreparedReferences:
        """One item's references as vectors, computed once (for repeated :meth:`score` calls)."""
        if isinstance(references, PreparedReferences):
            return references
        if isinstance(references, str) or not references:
            raise InputError("references must be a non-empty list of sentences")
        return PreparedReferences(self.vector(r) for r in references)

    def _similarity(self, hyp, ref) -> float:
        """Sum over orders of the clipped cosine, times the length penalty."""
        (vec_h, norm_h, len_h), (vec_r, norm_r, len_r) = hyp, ref
        total = 0.0
        for order in range(self.n):
            if norm_h[order] == 0 or norm_r[order] == 0:
                continue  # coco: val stays the (zero, or unnormalized zero-idf) dot product
            ref_order = vec_r[order]
            val = 0.0
            for gram, w in vec_h[order].items():
                r = ref_order.get(gram)
                if r is not None:
                    val += min(w, r) * r
            total += val / (norm_h[order] * norm_r[order])
        return total * math.exp(-((len_h - len_r) ** 2) / (2 * self.sigma**2))

    def score(self, hypothesis, references) -> float:
        """CIDEr-D (x10) of one hypothesis against its references (sentences, or :meth:`prepare`'s)."""
        refs = self.prepare(references)
        hyp = self.vector(hypothesis)
        return sum(self._similarity(hyp, ref) for ref in refs) / self.n / len(refs) * 10.0

    def scores(self, hypotheses, references) -> list[float]:
        """:meth:`score` of each (hypothesis, references) pair."""
        references, hypotheses = corpus_lists(references, hypotheses, "CIDEr-D")
        return [self.score(h, r) for h, r in zip(hypotheses, references)]


def corpus_cider(references, hypotheses, n: int = 4, sigma: float = 6.0) -> tuple[float, list[float]]:
    """CIDEr-D of a corpus, its df statistics from the corpus's own references.

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
    scorer = CiderD(references, n=n, sigma=sigma)
    scores = scorer.scores(hypotheses, references)
    return sum(scores) / len(scores), scores
