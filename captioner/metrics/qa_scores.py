"""Scores of single-answer QA (COCO-QA style) per question type, and the prior baseline.

`scores_by_type(predicted, truths, types)` gives exact-match accuracy and WUPS at 0.9 and
0.0 (`captioner.metrics.wups`), overall and per type, all in percent.
`most_common_per_type(types, answers)` is the "most common answer per question type" baseline
fitted on training rows; `predict_most_common` applies it (a type never seen in training
gets the overall most common answer).
"""

from __future__ import annotations

import collections

from captioner.metrics.wups import wups_pair

__all__ = ["scores_by_type", "most_common_per_type", "predict_most_common", "WUPS_THRESHOLDS"]

WUPS_THRESHOLDS = (0.9, 0.0)


def _scores(pairs, similarity):
    n = len(pairs)
    out = {"questions": n, "accuracy": 100.0 * sum(p == t for p, t in pairs) / n if n else None}
    if similarity is not None:
        for th in WUPS_THRESHOLDS:
            out[f"wups_{th}"] = 100.0 * sum(wups_pair(p, t, th, similarity) for p, t in pairs) / n if n else None
    return out


def scores_by_type(predicted, truths, types, similarity=None):
    """{"overall": {...}, "by_type": {type: {...}}}; each {"questions", "accuracy", "wups_0.9",
    "wups_0.0"} in percent (WUPS only when a ``similarity`` function is given)."""
    predicted, truths, types = list(predicted), list(truths), list(types)
    if not len(predicted) == len(truths) == len(types):
        raise ValueError(f"{len(predicted)} predictions, {len(truths)} truths, {len(types)} types")
    groups = collections.defaultdict(list)
    for p, t, k in zip(predicted, truths, types):
        groups[k].append((p, t))
    return {"overall": _scores(list(zip(predicted, truths)), similarity),
            "by_type": {k: _scores(v, similarity) for k, v in sorted(groups.items())}}


def most_common_per_type(types, answers):
    """{type: its most frequent training answer (ties: alphabetical)}, and "*" for all types."""
    counts = collections.defaultdict(collections.Counter)
    for k, a in zip(types, answers):
        counts[k][a] += 1
        counts["*"][a] += 1
    return {k: min(c, key=lambda a: (-c[a], a)) for k, c in counts.items()}


def predict_most_common(table, types):
    """The baseline's answer for each question type."""
    return [table.get(k, table.get("*")) for k in types]
