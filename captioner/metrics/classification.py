"""What every classifier reports (documents, clips, sentence pairs): one confusion matrix and the
figures read from it, in percent.

    report = classification_report(gold, predicted, labels, majority=majority_label(train_gold, len(labels)))

``gold`` and ``predicted`` are label indices into ``labels``. Macro-F1 averages every class's F1;
balanced accuracy is the mean recall over the classes present in ``gold`` (predicting the majority
class everywhere scores 100 / classes; Brodersen et al. 2010); the majority-class accuracy is what
always answering the training set's most frequent label would score.
"""

from __future__ import annotations

import numpy as np


def confusion_matrix(gold, predicted, num_classes):
    """int64 (K, K): rows the gold label, columns the predicted one."""
    confusion = np.zeros((num_classes, num_classes), np.int64)
    np.add.at(confusion, (np.asarray(gold, np.int64), np.asarray(predicted, np.int64)), 1)
    return confusion


def balanced_accuracy(gold, predicted, num_classes):
    """Mean recall (%) over the classes present in `gold`; 0 for no examples."""
    confusion = confusion_matrix(gold, predicted, num_classes)
    present = confusion.sum(1) > 0
    return 100.0 * float(np.mean(np.diag(confusion)[present] / confusion.sum(1)[present])) if present.any() else 0.0


def majority_label(train_gold, num_classes):
    """The most frequent label index of the training set (the lowest on a tie)."""
    return int(np.bincount(np.asarray(train_gold, np.int64), minlength=num_classes).argmax())


def classification_report(gold, predicted, labels, majority=None, unit="examples"):
    """{"accuracy", "macro_f1", "balanced_accuracy", unit (the count), "per_class_precision",
    "per_class_recall", "per_class_f1", "support", "confusion (rows gold, columns predicted)",
    "labels"}, percentages rounded to 2 places; with `majority` (a label index, `majority_label`):
    also "majority_class" and "majority_class_accuracy"."""
    gold, predicted, k = np.asarray(gold, np.int64), np.asarray(predicted, np.int64), len(labels)
    confusion = confusion_matrix(gold, predicted, k)
    tp = np.diag(confusion).astype(float)
    precision = tp / np.maximum(confusion.sum(0), 1)
    recall = tp / np.maximum(confusion.sum(1), 1)
    f1 = np.where(precision + recall > 0, 2 * precision * recall / np.maximum(precision + recall, 1e-12), 0.0)

    def per_class(values):
        return {labels[i]: round(100 * float(values[i]), 2) for i in range(k)}

    report = {"accuracy": round(100 * float((gold == predicted).mean()), 2) if len(gold) else 0.0,
              "macro_f1": round(100 * float(f1.mean()), 2) if k else 0.0,
              "balanced_accuracy": round(balanced_accuracy(gold, predicted, k), 2), unit: int(len(gold)),
              "per_class_precision": per_class(precision), "per_class_recall": per_class(recall),
              "per_class_f1": per_class(f1), "support": {labels[i]: int(confusion[i].sum()) for i in range(k)},
              "confusion (rows gold, columns predicted)": confusion.tolist(), "labels": list(labels)}
    if majority is not None:
        report["majority_class"] = labels[majority]
        report["majority_class_accuracy"] = round(100 * float((gold == majority).mean()), 2) if len(gold) else 0.0
    return report
