import numpy as np
import pytest

from captioner.reference import gradient_check, numerical_gradient, relative_error


def test_numerical_gradient_of_a_cubic_and_restores_the_array():
    theta = np.array([[1.0, -2.0], [0.5, 3.0]])
    before = theta.copy()
    grad = numerical_gradient(lambda: np.sum(theta ** 3), theta)
    np.testing.assert_allclose(grad, 3 * before ** 2, rtol=1e-8)
    np.testing.assert_array_equal(theta, before)


def test_relative_error():
    assert relative_error(np.zeros(3), np.zeros(3)) == 0.0
    assert relative_error(np.array([1.0, 0.0]), np.array([1.0, 0.0])) == 0.0
    assert relative_error(np.array([1.0]), np.array([-1.0])) == 1.0
    assert relative_error(np.array([2.0]), np.array([1.0])) == pytest.approx(1 / 3)


def test_refuses_float32_and_shape_mismatch():
    theta32 = np.ones(3, np.float32)
    with pytest.raises(TypeError):
        numerical_gradient(lambda: float(theta32.sum()), theta32)
    theta = np.ones(3)
    with pytest.raises(ValueError):
        gradient_check(lambda: theta.sum(), {"t": theta}, {"t": np.ones(4)})
