"""When a classifier should say "I don't know": a confidence threshold chosen on dev.

The rule (`choose_min_probability`): cut the dev questions into bins of the model's top
probability p, [0, 0.1), [0.1, 0.2), ... [0.9, 1.0]; the threshold is the upper edge of the
highest bin (holding at least ``min_count`` questions) whose answers are right less than
half the time, or 0 when no bin is. An answer with p below it is replaced by "don't know":
at that confidence the model was more often wrong than right on dev photos. Bins with
fewer than ``min_count`` questions are not trusted either way.

`answered_table` gives, for a list of thresholds, the fraction of questions answered and the
accuracy on those (the coverage / accuracy trade-off the card plots).
"""

from __future__ import annotations

import numpy as np

__all__ = ["choose_min_probability", "answered_table", "reliability_bins"]


def reliability_bins(top_probability, correct, width=0.1):
    """[(low, high, questions, accuracy or None)] of the dev questions per bin of top probability."""
    p = np.asarray(top_probability, np.float64)
    ok = np.asarray(correct, bool)
    if p.shape != ok.shape:
        raise ValueError(f"{p.shape} probabilities for {ok.shape} correct flags")
    edges = np.round(np.arange(0.0, 1.0 + 1e-9, width), 10)
    if edges[-1] < 1.0:
        edges = np.append(edges, 1.0)
    out = []
    for k, (low, high) in enumerate(zip(edges[:-1], edges[1:])):
        inside = (p >= low) & ((p < high) if k < len(edges) - 2 else (p <= high))
        n = int(inside.sum())
        out.append((float(low), float(high), n, float(ok[inside].mean()) if n else None))
    return out


def choose_min_probability(top_probability, correct, width=0.1, min_count=20, target=0.5):
    """The threshold of the module docstring: the upper edge of the highest bin (>= min_count
    questions) with accuracy < target; 0.0 when none."""
    threshold = 0.0
    for _, high, n, acc in reliability_bins(top_probability, correct, width):
        if n >= min_count and acc < target:
            threshold = high
    return float(threshold)


def answered_table(top_probability, correct, thresholds):
    """[{"min_probability", "answered", "accuracy_answered"}] for each threshold (fractions)."""
    p = np.asarray(top_probability, np.float64)
    ok = np.asarray(correct, bool)
    rows = []
    for t in thresholds:
        keep = p >= t
        rows.append({"min_probability": float(t), "answered": float(keep.mean()) if len(p) else 0.0,
                     "accuracy_answered": float(ok[keep].mean()) if keep.any() else None})
    return rows
