"""SNLI / MultiNLI jsonl (Bowman et al. 2015): one JSON object a line with ``sentence1``,
``sentence2``, ``gold_label`` (``entailment`` / ``neutral`` / ``contradiction``, or ``-`` when the
annotators did not agree: those pairs are skipped, as is standard) and ``pairID``."""

from __future__ import annotations

import json

from captioner.data.sick import EntailmentPair
from captioner.data.tsv_pairs import read_text_lines
from captioner.errors import InputError

__all__ = ["load_snli"]

_LABELS = {"entailment": "ENTAILMENT", "neutral": "NEUTRAL", "contradiction": "CONTRADICTION"}


def load_snli(path, split="") -> list[EntailmentPair]:
    """Pairs of an SNLI jsonl file (plain or .gz), labels mapped to the SICK names
    (NEUTRAL / ENTAILMENT / CONTRADICTION); ``gold_label == "-"`` lines are skipped."""
    pairs = []
    for line_no, line in enumerate(read_text_lines(path), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{line_no}: not valid JSON ({e.msg}, column {e.colno})") from None
        if not isinstance(obj, dict):
            raise InputError(f"{path}:{line_no}: expected a JSON object, got {type(obj).__name__}")
        for key in ("sentence1", "sentence2", "gold_label"):
            if key not in obj:
                raise InputError(f"{path}:{line_no}: missing {key!r}")
        gold = str(obj["gold_label"]).strip().lower()
        if gold == "-":
            continue
        if gold not in _LABELS:
            raise InputError(f"{path}:{line_no}: unknown gold_label {obj['gold_label']!r}")
        premise, hypothesis = str(obj["sentence1"]).strip(), str(obj["sentence2"]).strip()
        if not premise or not hypothesis:
            raise InputError(f"{path}:{line_no}: empty sentence1 or sentence2")
        pairs.append(EntailmentPair(premise, hypothesis, _LABELS[gold], str(obj.get("pairID", "")), split,
                                    None, f"{path}:{line_no}"))
    if not pairs:
        raise InputError(f"{path}: no labelled pairs")
    return pairs
