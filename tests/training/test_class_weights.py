"""The shared `ArrayBatches` with per-example weights and `class_weights`, worked by hand and
against scikit-learn's `compute_class_weight("balanced")`."""

import numpy as np
import pytest

from captioner.training.trainer import ArrayBatches, class_weights


def test_balanced_weights_by_hand_and_against_scikit_learn():
    labels = np.array([0, 0, 0, 0, 0, 0, 1, 1, 2, 2, 2, 2])  # 6, 2, 4 of 12; class 3 never seen
    w = class_weights(labels, 4, "balanced")
    np.testing.assert_allclose(w, [12 / (3 * 6), 12 / (3 * 2), 12 / (3 * 4), 0.0])
    assert np.isclose(w[labels].sum(), len(labels))  # the weighted examples still sum to n
    sklearn = pytest.importorskip("sklearn.utils.class_weight")
    np.testing.assert_allclose(w[:3], sklearn.compute_class_weight("balanced", classes=np.arange(3), y=labels))
    root = class_weights(labels, 4, "sqrt")
    assert np.isclose(root[labels].sum(), len(labels)) and root[3] == 0.0
    np.testing.assert_allclose(root[:3] / root[0], np.sqrt(w[:3] / w[0]))  # square roots of the same ratios
    np.testing.assert_array_equal(class_weights(labels, 4, "none"), np.ones(4))
    with pytest.raises(ValueError, match="choose from"):
        class_weights(labels, 4, "inverse")


def test_array_batches_carry_weights_in_the_same_order():
    x = {"features": np.arange(10, dtype=np.float32)[:, None]}
    y = np.arange(10) % 3
    plain = list(ArrayBatches(x, y, 4).batches(epoch=1, seed=3))
    weighted = list(ArrayBatches(x, y, 4, sample_weights=y * 10.0).batches(epoch=1, seed=3))
    assert [len(b) for b in plain] == [2, 2, 2] and [len(b) for b in weighted] == [3, 3, 3]
    for (xa, ya), (xb, yb, wb) in zip(plain, weighted):
        np.testing.assert_array_equal(xa["features"], xb["features"])
        np.testing.assert_array_equal(ya, yb)
        np.testing.assert_array_equal(wb, yb * 10.0)
        assert wb.dtype == np.float32
