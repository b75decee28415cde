"""ROUGE-1 / ROUGE-2 / ROUGE-L F1 for summaries and headlines, through Google's ``rouge-score``.

Summarization papers report ROUGE F1 from Google's ``rouge-score`` package (a Python
reimplementation of ROUGE-1.5.5) with its default tokenizer and Porter stemming on; so do
we: the tokenizer lower-cases, turns every run of characters other than ``a-z0-9`` into a
space (so non-ASCII letters vanish), splits on spaces and stems tokens longer than three
characters. Per pair, ``F1 = 2PR / (P + R)``; ROUGE-L is the sentence-level LCS (``rougeL``,
not the newline-split ``rougeLsum``). With several references, rouge-score's ``score_multi``
keeps, per ROUGE type, the reference of the highest F1. The corpus figure is the mean of the
per-pair F1, times 100.

The module is named ``rouge_f1`` rather than ``rouge_score`` so that it never shadows the
package it wraps.

How it differs from :func:`captioner.metrics.rouge.rouge_l` (the coco-caption ROUGE-L used for
captions): that one splits on whitespace only (case and punctuation count), does not stem,
weighs recall with beta = 1.2 instead of F1's beta = 1, and with several references maximises
precision and recall separately. On text that is already lower-case alphanumeric words, no
stemmable word, one reference, and ``beta=1`` the two agree exactly (tested).
"""

from __future__ import annotations

import dataclasses

from captioner.errors import CaptionerError, InputError
from captioner.metrics.corpus import corpus_lists

__all__ = ["ROUGE_TYPES", "RougeF1", "RougeResult", "corpus_rouge_f1", "rouge_tool_description"]

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")


def _rouge_score_modules():
    try:
        from rouge_score import rouge_scorer, tokenizers
    except ImportError:  # pragma: no cover - the package is pinned in requirements.txt
        raise CaptionerError("ROUGE-1/2/L needs Google's rouge-score: pip install rouge-score==0.1.2") from None
    return rouge_scorer, tokenizers


def rouge_tool_description(use_stemmer: bool = True) -> str:
    """One line naming the tool and settings, to store beside every figure."""
    from importlib.metadata import version

    return (f"rouge-score {version('rouge-score')} (Google), default tokenizer, "
            f"Porter stemmer {'on' if use_stemmer else 'off'}; F1 per pair, corpus = mean x 100")


class RougeF1:
    """A rouge-score scorer for ROUGE-1/2/L F1 (fractions in [0, 1] per pair).

    :meth:`score` goes through ``RougeScorer.score`` as published. For scoring many
    candidates against one reference (e.g. every lead-N of a document), :meth:`tokenize_words`
    + :meth:`score_tokens` give the same numbers (tested) from cached tokens: rouge-score's
    tokenizer only ever splits at whitespace too, so tokenizing word by word and concatenating
    equals tokenizing the joined text.
    """

    def __init__(self, use_stemmer: bool = True, rouge_types=ROUGE_TYPES):
        rouge_scorer, tokenizers = _rouge_score_modules()
        unknown = [t for t in rouge_types if t not in ROUGE_TYPES]
        if unknown:
            raise InputError(f"unknown ROUGE type(s) {unknown}; known: {list(ROUGE_TYPES)}")
        self.use_stemmer = use_stemmer
        self.rouge_types = tuple(rouge_types)
        self._scorer = rouge_scorer.RougeScorer(list(self.rouge_types), use_stemmer=use_stemmer)
        self._tokenizer = tokenizers.DefaultTokenizer(use_stemmer)
        self._rs = rouge_scorer
        self._word_cache: dict[str, list[str]] = {}

    def score(self, references, hypothesis: str) -> dict[str, float]:
        """F1 per ROUGE type of one hypothesis against a reference string or a list of them."""
        if isinstance(references, str):
            scores = self._scorer.score(references, hypothesis)
        else:
            references = list(references)
            if not references:
                raise InputError("ROUGE needs at least one reference")
            scores = self._scorer.score_multi(references, hypothesis)
        return {t: float(scores[t].fmeasure) for t in self.rouge_types}

    def tokenize(self, text: str) -> list[str]:
        """rouge-score's tokens of ``text`` (lower-cased, alphanumeric, stemmed if on)."""
        return [tok for word in self.tokenize_words(text) for tok in word]

    def tokenize_words(self, text: str) -> list[list[str]]:
        """rouge-score's tokens of each whitespace-separated word of ``text`` (a word can give
        zero tokens, e.g. ``"--"``, or several, e.g. ``"U.S."``); cached per word."""
        out = []
        for word in text.split():
            tokens = self._word_cache.get(word)
            if tokens is None:
                tokens = self._tokenizer.tokenize(word)
                if len(self._word_cache) < 500_000:
                    self._word_cache[word] = tokens
            out.append(tokens)
        return out

    def score_tokens(self, reference_tokens, hypothesis_tokens) -> dict[str, float]:
        """F1 per ROUGE type from already tokenized text (one reference)."""
        rs = self._rs
        out = {}
        for t in self.rouge_types:
            if t == "rougeL":
                out[t] = float(rs._score_lcs(reference_tokens, hypothesis_tokens).fmeasure)
            else:
                n = int(t[len("rouge"):])
                out[t] = float(rs._score_ngrams(rs._create_ngrams(reference_tokens, n),
                                                rs._create_ngrams(hypothesis_tokens, n)).fmeasure)
        return out


@dataclasses.dataclass
class RougeResult:
    """Corpus ROUGE: ``scores`` (type -> mean F1 x 100), ``per_item`` (type -> F1 per pair, in [0, 1])."""

    scores: dict[str, float]
    per_item: dict[str, list[float]]
    tool: str

    def __getitem__(self, rouge_type: str) -> float:
        return self.scores[rouge_type]


def corpus_rouge_f1(references, hypotheses, use_stemmer: bool = True, rouge_types=ROUGE_TYPES) -> RougeResult:
    """Mean per-pair ROUGE F1 x 100 of ``hypotheses`` (strings) against ``references`` (one
    string, or a list of strings, per hypothesis)."""
    references, hypotheses = corpus_lists(references, hypotheses, "corpus_rouge_f1")
    scorer = RougeF1(use_stemmer, rouge_types)
    per_item = {t: [] for t in scorer.rouge_types}
    for refs, hyp in zip(references, hypotheses):
        if not isinstance(hyp, str):
            raise InputError(f"hypotheses must be strings, got {type(hyp).__name__}")
        for t, f in scorer.score(refs, hyp).items():
            per_item[t].append(f)
    scores = {t: 100.0 * sum(v) / len(v) for t, v in per_item.items()}
    return RougeResult(scores, per_item, rouge_tool_description(use_stemmer))
