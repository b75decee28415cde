"""The one classification report of the classifier recipes, worked by hand and against scikit-learn."""

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, f1_score, precision_recall_fscore_support

from captioner.metrics.classification import balanced_accuracy, classification_report, confusion_matrix, majority_label


def test_classification_report_by_hand():
    r = classification_report([0, 0, 1, 1], [0, 1, 1, 1], ["a", "b"], unit="documents")
    assert r["accuracy"] == 75.0 and r["confusion (rows gold, columns predicted)"] == [[1, 1], [0, 2]]
    # a: precision 1, recall 0.5 -> F1 2/3; b: precision 2/3, recall 1 -> F1 0.8
    assert r["per_class_f1"] == {"a": 66.67, "b": 80.0} and r["macro_f1"] == 73.33
    assert r["per_class_precision"] == {"a": 100.0, "b": 66.67} and r["per_class_recall"] == {"a": 50.0, "b": 100.0}
    assert r["documents"] == 4 and r["support"] == {"a": 2, "b": 2} and r["labels"] == ["a", "b"]
    assert "majority_class" not in r
    r = classification_report([0, 0, 1, 1], [0, 1, 1, 1], ["a", "b"], majority=majority_label([1, 1, 0], 2))
    assert r["majority_class"] == "b" and r["majority_class_accuracy"] == 50.0 and r["examples"] == 4


def test_balanced_accuracy_is_the_mean_recall_of_present_classes():
    labels = [0, 0, 0, 0, 1, 2]
    assert balanced_accuracy(labels, [0, 0, 0, 0, 0, 0], 4) == pytest.approx(100 / 3)  # majority class everywhere
    assert balanced_accuracy(labels, [0, 0, 1, 1, 1, 2], 4) == pytest.approx(100 * (0.5 + 1 + 1) / 3)
    assert balanced_accuracy([], [], 3) == 0.0


def test_the_report_agrees_with_scikit_learn():
    rng = np.random.default_rng(0)
    gold, predicted = rng.integers(0, 4, 300), rng.integers(0, 4, 300)
    labels = ["w", "x", "y", "z"]
    r = classification_report(gold, predicted, labels)
    precision, recall, f1, support = precision_recall_fscore_support(gold, predicted, labels=range(4), zero_division=0)
    assert r["macro_f1"] == pytest.approx(100 * f1_score(gold, predicted, average="macro"), abs=0.01)
    assert list(r["per_class_recall"].values()) == pytest.approx(100 * recall, abs=0.01)
    assert list(r["per_class_precision"].values()) == pytest.approx(100 * precision, abs=0.01)
    assert list(r["support"].values()) == support.tolist()
    assert r["balanced_accuracy"] == pytest.approx(100 * balanced_accuracy_score(gold, predicted), abs=0.01)
    assert confusion_matrix(gold, predicted, 4).sum() == 300
