"""SNLI / MultiNLI jsonl (Bowman et al. 2015): one JSON object a line with ``sentence1``,
``sentence2``, ``gold_label`` (``entailment`` / ``neutral`` / ``contradiction``, or ``-`` when the
annotators did not agree: those pairs are skipped, as is standard) and ``pairID``."""

from __future__ import annotations


from captioner.data.sick import EntailmentPair
from captioner.data.json_file import json_objects
from captioner.errors import InputError

__all__ = ["load_snli"]

_LABELS = {"entailment": "ENTAILMENT", "neutral": "NEUTRAL", "contradiction": "CONTRADICTION"}


def load_snli(path, split="") -> list[EntailmentPair]:
    """Pairs of an SNLI jsonl file (plain or .gz), labels mapped to the SICK names
    (NEUTRAL / ENTAILMENT / CONTRADICTION); ``gold_label == "-"`` lines are skipped."""
    pairs = []
    for where, obj in json_objects(path):
        for key in ("sentence1", "sentence2", "gold_label"):
            if key not in obj:
                raise InputError(f"{where}: missing {key!r}")
        gold = str(obj["gold_label"]).strip().lower()
        if gold == "-":
            continue
        if gold not in _LABELS:
            raise InputError(f"{where}: unknown gold_label {obj['gold_label']!r}")
        premise, hypothesis = str(obj["sentence1"]).strip(), str(obj["sentence2"]).strip()
        if not premise or not hypothesis:
            raise InputError(f"{where}: empty sentence1 or sentence2")
        pairs.append(EntailmentPair(premise, hypothesis, _LABELS[gold], str(obj.get("pairID", "")), split,
                                    None, where))
    if not pairs:
        raise InputError(f"{path}: no labelled pairs")
    return pairs
