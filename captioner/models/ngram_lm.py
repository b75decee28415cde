"""The count language models now live in :mod:`captioner.text.ngram_lm` (a lower layer, so that
decoding's n-best rescorer can use them); this name stays for the model cards that cite it."""

from captioner.text.ngram_lm import KneserNeyLM, add_one_unigram_nll, compare_baselines  # noqa: F401
