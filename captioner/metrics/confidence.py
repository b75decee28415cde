"""When a classifier should say "I don't know": a confidence threshold chosen on dev.

The rule (`choose_min_probability`): cut the dev questions into bins of the model's top
probability p, [0, 0.1), [0.1, 0.2), ... [0.9, 1.0]; the threshold is the upper edge of the
highest bin (holding at least ``min_count`` questions) whose answers are right less than
half the time, or 0 when no bin is. An answer with p below it is replaced by "don't know":
at that confidence the model was more often wrong than right on dev photos. Bins with
fewer than ``min_count`` questions are not trusted either way.

`answered_table` gives, for a list of thresholds, the fraction of questions answered and the
accuracy on those (the coverage / accuracy trade-off the card plots).

Whether a probability means what it says: `expected_calibration_error` (ECE, Naeini et al. 2015 as
Guo et al. 2017 use it: 15 equal-width bins of the top probability, the gap between each bin's
accuracy and its mean confidence weighted by its share of the examples), and temperature scaling
(Guo et al. 2017, "On Calibration of Modern Neural Networks"): one scalar T > 0 divides the logits,
fitted on dev by the negative log-likelihood (`fit_temperature`). Everything here works from the
probabilities a model gives (log p is the logits up to a per-row constant, so softmax(log p / T)
is softmax(logits / T)); an ensemble's mixed probabilities are tempered the same way.
"""

from __future__ import annotations

import numpy as np

__all__ = ["choose_min_probability", "answered_table", "reliability_bins", "expected_calibration_error",
           "fit_temperature", "temper", "negative_log_likelihood"]


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


def _checked(probabilities, labels, allow_unknown=False):
    p = np.asarray(probabilities, np.float64)
    y = np.asarray(labels, np.int64)
    if p.ndim != 2 or y.shape != (p.shape[0],):
        raise ValueError(f"probabilities {p.shape} and labels {y.shape}: want (N, K) and (N,)")
    if len(y) and (y.min() < (-1 if allow_unknown else 0) or y.max() >= p.shape[1]):
        raise ValueError(f"labels must be class indices in [0, {p.shape[1]}); got {y.min()}..{y.max()}")
    return p, y


def temper(probabilities, temperature):
    """softmax(log p / T) per row: the probabilities the model gives with its logits divided by T."""
    if not (np.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature {temperature!r}: must be a finite number > 0")
    logp = np.log(np.maximum(np.asarray(probabilities, np.float64), 1e-300)) / float(temperature)
    logp -= logp.max(-1, keepdims=True)
    e = np.exp(logp)
    return e / e.sum(-1, keepdims=True)


def negative_log_likelihood(probabilities, labels):
    """Mean -log p(label) (nats)."""
    p, y = _checked(probabilities, labels)
    return float(-np.mean(np.log(np.maximum(p[np.arange(len(y)), y], 1e-300)))) if len(y) else 0.0


def expected_calibration_error(probabilities, labels, bins=15):
    """ECE (a fraction): sum over equal-width bins of the top probability of (share of examples) x
    |accuracy - mean top probability|; the last bin includes 1.0. A label -1 (a gold answer that is
    none of the classes) counts as never right."""
    p, y = _checked(probabilities, labels, allow_unknown=True)
    if not len(y):
        return 0.0
    top, correct = p.max(-1), p.argmax(-1) == y
    which = np.minimum((top * bins).astype(np.int64), bins - 1)
    gap = 0.0
    for b in range(bins):
        inside = which == b
        if inside.any():
            gap += inside.mean() * abs(correct[inside].mean() - top[inside].mean())
    return float(gap)


def fit_temperature(probabilities, labels, low=0.05, high=20.0):
    """The T in [low, high] minimizing the dev negative log-likelihood of softmax(log p / T)
    (a bounded 1-D search over log T; the NLL is convex in 1/T)."""
    from scipy.optimize import minimize_scalar

    p, y = _checked(probabilities, labels)
    if not len(y):
        raise ValueError("no labelled examples to fit a temperature on")
    logp = np.log(np.maximum(p, 1e-300))

    def nll(log_t):
        z = logp / np.exp(log_t)
        z -= z.max(-1, keepdims=True)
        return float(np.mean(np.log(np.exp(z).sum(-1)) - z[np.arange(len(y)), y]))

    best = minimize_scalar(nll, bounds=(np.log(low), np.log(high)), method="bounded", options={"xatol": 1e-5})
    return float(np.exp(best.x))
