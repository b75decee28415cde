"""Caption metrics: corpus BLEU, CIDEr-D, ROUGE-L (pure Python) and the coco-caption toolkit.

Use :func:`evaluate_captions` for reportable figures; it says which tool produced them.
"""

from captioner.metrics.bleu import (
    BleuScore,
    brevity_penalty,
    closest_ref_length,
    corpus_bleu,
    modified_precision,
    ngram_counts,
)
from captioner.metrics.caption_metrics import METRIC_NAMES, evaluate_captions, java_available
from captioner.metrics.cider import corpus_cider
from captioner.metrics.rouge import corpus_rouge_l, lcs_length, rouge_l

__all__ = [
    "BleuScore",
    "brevity_penalty",
    "closest_ref_length",
    "corpus_bleu",
    "modified_precision",
    "ngram_counts",
    "corpus_cider",
    "corpus_rouge_l",
    "lcs_length",
    "rouge_l",
    "evaluate_captions",
    "java_available",
    "METRIC_NAMES",
]
