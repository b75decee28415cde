"""Caption metrics: corpus BLEU, CIDEr-D, ROUGE-L (pure Python) and the coco-caption toolkit;
ROUGE-1/2/L F1 for summaries and headlines through Google's rouge-score.

Use :func:`evaluate_captions` for reportable figures; it says which tool produced them.
"""

from captioner.metrics.bleu import (
    BleuScore,
    SentenceBleu,
    brevity_penalty,
    closest_ref_length,
    corpus_bleu,
    modified_precision,
    ngram_counts,
    sentence_bleu,
)
from captioner.metrics.caption_metrics import METRIC_NAMES, evaluate_captions, java_available, meteor_session
from captioner.metrics.cider import CiderD, corpus_cider
from captioner.metrics.rouge import corpus_rouge_l, lcs_length, rouge_l
from captioner.metrics.rouge_f1 import ROUGE_TYPES, RougeF1, RougeResult, corpus_rouge_f1

__all__ = [
    "BleuScore",
    "brevity_penalty",
    "closest_ref_length",
    "corpus_bleu",
    "modified_precision",
    "ngram_counts",
    "SentenceBleu",
    "sentence_bleu",
    "CiderD",
    "corpus_cider",
    "corpus_rouge_l",
    "lcs_length",
    "rouge_l",
    "ROUGE_TYPES",
    "RougeF1",
    "RougeResult",
    "corpus_rouge_f1",
    "evaluate_captions",
    "java_available",
    "meteor_session",
    "METRIC_NAMES",
]
