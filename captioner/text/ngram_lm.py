"""Count baselines for the language models: interpolated Kneser-Ney n-grams and an add-one unigram.

What a user would try before an LSTM, written simply (dicts of counts), measured on exactly the
tokens the neural model predicts (`compare_baselines`).

Interpolated Kneser-Ney (Chen and Goodman 1998, section 3.5, one discount per order), for a
history h of n-1 tokens and its shortening h' (the first token dropped)::

    P_n(w | h) = max(c(h w) - D_n, 0) / c(h .)  +  D_n * N1+(h .) / c(h .) * P_{n-1}(w | h')

c is the raw count at the highest order and the continuation count N1+(. h w) (how many
distinct tokens precede h w) at the lower ones; a history never seen gives all its weight to
P_{n-1}; P_0 is uniform over the training vocabulary. D_n = n1 / (n1 + 2 n2) from the counts
of n-grams seen once and twice (Ney et al. 1994).
"""

from __future__ import annotations

import collections
import math

BOS, EOS = "<s>", "</s>"


class KneserNeyLM:
    def __init__(self, order=3):
        if order < 1:
            raise ValueError(f"order must be >= 1, got {order}")
        self.order = order

    def _padded(self, seq, sentences):
        return [BOS] * (self.order - 1) + list(seq) + ([EOS] if sentences else [])

    def fit(self, sequences, sentences=True):
        """sequences: token lists (sentences, each closed by </s>; or, with sentences=False,
        streams of characters)."""
        n = self.order
        counts = [collections.Counter() for _ in range(n + 1)]  # counts[k]: k-gram -> count
        vocab = set()
        for seq in sequences:
            padded = self._padded(seq, sentences)
            vocab.update(padded[n - 1:])
            for i in range(n - 1, len(padded)):
                counts[n][tuple(padded[i - n + 1:i + 1])] += 1
        for k in range(n - 1, 0, -1):  # continuation counts: distinct left extensions
            for gram in counts[k + 1]:
                counts[k][gram[1:]] += 1
        self.vocab_size = len(vocab)
        self.counts = counts
        self.totals = [collections.Counter() for _ in range(n + 1)]  # history -> sum of counts
        self.types = [collections.Counter() for _ in range(n + 1)]   # history -> distinct next tokens
        self.discounts = [0.0] * (n + 1)
        for k in range(1, n + 1):
            for gram, c in counts[k].items():
                self.totals[k][gram[:-1]] += c
                self.types[k][gram[:-1]] += 1
            n1 = sum(1 for c in counts[k].values() if c == 1)
            n2 = sum(1 for c in counts[k].values() if c == 2)
            # no singletons (tiny data): the estimate would be 0 and every unseen word impossible
            self.discounts[k] = n1 / (n1 + 2 * n2) if n1 else 0.5
        return self

    def prob(self, word, history):
        """P(word | the last order-1 tokens of history)."""
        history = tuple(history)[-(self.order - 1):] if self.order > 1 else ()
        p = 1.0 / self.vocab_size
        for k in range(1, self.order + 1):  # lowest order first, each interpolating the one below
            h = history[len(history) - (k - 1):] if k > 1 else ()
            total = self.totals[k].get(h, 0)
            if total:
                d = self.discounts[k]
                p = max(self.counts[k].get(h + (word,), 0) - d, 0) / total + d * self.types[k][h] / total * p
        return p

    def nll(self, sequences, sentences=True):
        """(summed negative log-likelihood in nats, predicted tokens). Sentences: every word and
        </s>; streams (sentences=False): every token after the first, as the LSTM reads them."""
        total, count = 0.0, 0
        for seq in sequences:
            padded = self._padded(seq, sentences)
            first = self.order - 1 + (0 if sentences else 1)
            for i in range(first, len(padded)):
                total -= math.log(self.prob(padded[i], padded[i - self.order + 1:i] if self.order > 1 else ()))
                count += 1
        return total, count


def add_one_unigram_nll(train, dev, sentences=True):
    """(nll, count) of the add-one (Laplace) unigram model on the same tokens as `KneserNeyLM.nll`."""
    counts = collections.Counter(t for seq in train for t in list(seq) + ([EOS] if sentences else []))
    n, v = sum(counts.values()), len(counts)
    total, count = 0.0, 0
    for seq in dev:
        tokens = list(seq) + [EOS] if sentences else list(seq)[1:]
        for t in tokens:
            total -= math.log((counts.get(t, 0) + 1) / (n + v))
            count += 1
    return total, count


def compare_baselines(train, dev, orders=(2, 3), sentences=True):
    """{name: {"perplexity", "bits_per_token", "tokens"}} of the count baselines on `dev`."""
    out = {}

    def entry(nll, count):
        return {"perplexity": math.exp(nll / count), "bits_per_token": nll / count / math.log(2), "tokens": count}

    out["add_one_unigram"] = entry(*add_one_unigram_nll(train, dev, sentences))
    for n in orders:
        out[f"kneser_ney_{n}gram"] = entry(*KneserNeyLM(n).fit(train, sentences).nll(dev, sentences))
    return out
