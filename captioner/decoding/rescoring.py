"""Re-scoring a generator's n-best list with knowledge the network does not hold.

The beam search ranks hypotheses by the model's own score (``log_prob / length ** alpha``). A
rescorer adds, log-linearly, features of each finished hypothesis's TEXT::

    score'(c) = w_model * model_score(c) + sum_f w_f * f(c)

and the n-best list is re-sorted by ``score'`` (ties keep the beam's order). It runs after the
one beam search, on its n-best (`Seq2Seq.translate` applies it, as it applies the coverage
penalty), so greedy, beam width and every CLI, app and server path see the same ranking; the
search itself is not changed.

:class:`LexiconRescorer` holds a word list (with counts) from the TRAINING data and a
character Kneser-Ney n-gram LM over it (:class:`captioner.text.ngram_lm.KneserNeyLM`),
rebuilt deterministically from the word list when first used. Its features of a candidate c:

    "model"      the model's score (what the beam search ranked by)
    "lm"         log P_LM(c </s>) / (len(c) + 1): the per-character log-probability
    "lm_sum"     log P_LM(c </s>): the whole word's log-probability
    "known"      1 if c is in the word list, else 0
    "log_count"  log(1 + count of c in the word list)
    "length"     len(c) in characters

Everything it needs is its config (JSON: the words, counts, LM order, weights): a model that
holds one saves and loads it in the `.keras` config, with no side file.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["FEATURES", "LexiconRescorer", "rescorer_from_config", "rescore_nbest"]

MIN_PROB = 1e-10  # the least probability the character LM gives a character
FEATURES = ("model", "lm", "lm_sum", "known", "log_count", "length")


class LexiconRescorer:
    """words: {word: count} or [[word, count], ...] or [word, ...] (count 1); lm_order: the
    character n-gram order (0: no LM; the "lm" features are then 0); weights: {feature: weight}
    (features missing: weight 0; "model" missing: 1)."""

    kind = "lexicon_lm"

    def __init__(self, words, lm_order=4, weights=None, lm_counts=False):
        if isinstance(words, dict):
            items = words.items()
        else:
            items = [(w, 1) if isinstance(w, str) else (w[0], w[1]) for w in words]
        counts = {}
        for w, c in items:
            if not isinstance(w, str) or not w:
                raise ValueError(f"rescorer words must be non-empty strings, got {w!r}")
            c = int(c)
            if c < 1:
                raise ValueError(f"rescorer word {w!r} has count {c}; counts must be >= 1")
            counts[w] = counts.get(w, 0) + c
        self.counts = dict(sorted(counts.items()))  # deterministic order
        self.lm_order = int(lm_order)
        if self.lm_order < 0:
            raise ValueError(f"lm_order must be >= 0, got {lm_order}")
        # True: the LM counts each word `count` times; False: each distinct word once
        self.lm_counts = bool(lm_counts)
        weights = {"model": 1.0, **(weights or {})}
        unknown = sorted(set(weights) - set(FEATURES))
        if unknown:
            raise ValueError(f"unknown rescorer feature(s) {unknown}; known: {list(FEATURES)}")
        self.weights = {f: float(weights[f]) for f in FEATURES if f in weights}
        for f, w in self.weights.items():
            if not math.isfinite(w):
                raise ValueError(f"rescorer weight of {f!r} must be finite, got {w}")
        self._lm = None
        self._lm_cache = {}

    # -- the character LM, built on first use ----------------------------------------------
    @property
    def lm(self):
        if self._lm is None and self.lm_order > 0 and self.counts:
            from captioner.text.ngram_lm import KneserNeyLM

            if self.lm_counts:
                sequences = [list(w) for w, c in self.counts.items() for _ in range(c)]
            else:
                sequences = [list(w) for w in self.counts]
            self._lm = KneserNeyLM(self.lm_order).fit(sequences, sentences=True)
        return self._lm

    def lm_log_prob(self, text: str) -> float:
        """log P_LM(text </s>) in nats (0.0 without an LM)."""
        if self.lm_order == 0 or not self.counts:
            return 0.0
        if text not in self._lm_cache:
            if len(self._lm_cache) > 100_000:
                self._lm_cache.clear()
            lm, n = self.lm, self.lm_order
            padded = lm._padded(list(text), True)  # <s> * (n - 1), the characters, </s>
            # a floor: KN gives 0 to a character never seen when a discount is 0 (tiny lists)
            self._lm_cache[text] = sum(math.log(max(lm.prob(padded[i], padded[i - n + 1:i] if n > 1 else ()), MIN_PROB))
                                       for i in range(n - 1, len(padded)))
        return self._lm_cache[text]

    # -- features and scores -----------------------------------------------------------
    def features(self, candidates, model_scores) -> np.ndarray:
        """(K, len(FEATURES)) float64: the features of each candidate text, in FEATURES order."""
        rows = []
        for text, score in zip(candidates, model_scores):
            lm = self.lm_log_prob(text)
            count = self.counts.get(text, 0)
            rows.append([float(score), lm / (len(text) + 1), lm, float(count > 0), math.log1p(count),
                         float(len(text))])
        return np.asarray(rows, np.float64).reshape(len(rows), len(FEATURES))

    def rescore(self, candidates, model_scores, source=None) -> np.ndarray:
        """The combined score of each candidate (K,); ``source`` (the input text) is unused here."""
        if not len(candidates):
            return np.zeros(0)
        w = np.array([self.weights.get(f, 0.0) for f in FEATURES])
        feats = self.features(candidates, model_scores)
        used = w != 0
        return feats[:, used] @ w[used]  # 0 * -inf would be nan: unused features stay out

    def get_config(self) -> dict:
        return {"kind": self.kind, "words": [[w, c] for w, c in self.counts.items()], "lm_order": self.lm_order,
                "lm_counts": self.lm_counts, "weights": dict(self.weights)}


_KINDS = {LexiconRescorer.kind: LexiconRescorer}


def rescorer_from_config(config):
    """None, a rescorer, or its config dict -> a rescorer (or None)."""
    if config is None or hasattr(config, "rescore"):
        return config
    if not isinstance(config, dict) or config.get("kind") not in _KINDS:
        raise ValueError(f"a rescorer config needs a 'kind' among {sorted(_KINDS)}, got {config!r:.200}")
    config = dict(config)
    return _KINDS[config.pop("kind")](**config)


def rescore_nbest(rescorer, candidates, model_scores, source=None):
    """-> (order, new scores): the candidates' indices best first by the rescorer's score
    (stable: ties keep the beam's order) and every candidate's combined score."""
    scores = np.asarray(rescorer.rescore(list(candidates), list(model_scores), source=source), np.float64)
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    return order, scores
