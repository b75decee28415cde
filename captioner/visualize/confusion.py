"""A confusion matrix as a PNG (rows: the true class, columns: the predicted one)."""

from __future__ import annotations

import numpy as np


def confusion_png(path, confusion, class_names, title=""):
    """Draw `confusion` (k, k) counts, each row shaded by its share of the row (recall), the
    count written in each cell; the row's recall and the column's precision on the margins.
    Written atomically; returns the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from captioner.visualize.attention_overlay import write_png_atomic

    m = np.asarray(confusion, dtype=np.int64)
    k = len(class_names)
    if m.shape != (k, k):
        raise ValueError(f"confusion: expected ({k}, {k}) for {k} classes, got {m.shape}")
    share = m / np.maximum(m.sum(1, keepdims=True), 1)
    recall = np.diag(m) / np.maximum(m.sum(1), 1)
    precision = np.diag(m) / np.maximum(m.sum(0), 1)
    side = 0.55 * k + 2.5
    fig, ax = plt.subplots(figsize=(side + 1.2, side), dpi=100)
    ax.imshow(share, cmap="Blues", vmin=0, vmax=1)
    for i in range(k):
        for j in range(k):
            if m[i, j]:
                ax.text(j, i, str(m[i, j]), ha="center", va="center", fontsize=8,
                        color="white" if share[i, j] > 0.6 else "black")
    ax.set_xticks(range(k), [f"{n}\n{p:.0%}" for n, p in zip(class_names, precision)], rotation=60, ha="right",
                  fontsize=8)
    ax.set_yticks(range(k), [f"{n} ({r:.0%})" for n, r in zip(class_names, recall)], fontsize=8)
    ax.set_xlabel("predicted (column precision)")
    ax.set_ylabel("true class (row recall)")
    accuracy = np.trace(m) / max(m.sum(), 1)
    ax.set_title(f"{title}{' - ' if title else ''}accuracy {accuracy:.1%} over {m.sum()} clips", fontsize=10)
    fig.tight_layout()
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return write_png_atomic(path, buf.getvalue())
