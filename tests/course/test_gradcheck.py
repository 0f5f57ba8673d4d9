"""course.gradcheck: the numeric gradient agrees with known gradients, and reports wrong ones."""

import numpy as np
import pytest

from course.gradcheck import gradient_error, numeric_gradient
from course.reference import avg_pool2d_grad_reference, avg_pool2d_reference


def test_known_gradient_of_a_smooth_function_passes():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    grad_out = rng.standard_normal((3, 4))
    numeric = numeric_gradient(np.tanh, x, grad_out)
    assert numeric.shape == x.shape and numeric.dtype == np.float64
    assert gradient_error((1 - np.tanh(x) ** 2) * grad_out, numeric) < 1e-10


@pytest.mark.parametrize("args", [(3, 2, 1, True), (3, 2, 1, False), ((2, 3), (1, 2), (1, 0), False), (4, 2, 2, True)])
def test_pooling_gradient_from_autograd_passes(args):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 2, 6, 7))
    grad_out = rng.standard_normal(avg_pool2d_reference(x, *args).shape)
    numeric = numeric_gradient(lambda t: avg_pool2d_reference(t, *args), x, grad_out)
    assert gradient_error(avg_pool2d_grad_reference(x, grad_out, *args), numeric) < 1e-10


def test_wrong_gradients_are_reported():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 1, 5, 5))
    grad_out = rng.standard_normal((1, 1, 3, 3))
    args = (3, 2, 1, False)
    numeric = numeric_gradient(lambda t: avg_pool2d_reference(t, *args), x, grad_out)
    right = avg_pool2d_grad_reference(x, grad_out, *args)
    inverted = avg_pool2d_grad_reference(x, grad_out, 3, 2, 1, True)  # count_include_pad inverted
    assert gradient_error(inverted, numeric) > 0.1
    assert gradient_error(right * 2, numeric) == pytest.approx(0.5)
    one_wrong = right.copy()
    one_wrong[0, 0, 2, 2] += 0.01 * np.abs(right).max()
    assert gradient_error(one_wrong, numeric) > 1e-3
    assert gradient_error(right, numeric) < 1e-10


def test_gradient_error_edge_cases():
    assert gradient_error(np.zeros(3), np.zeros(3)) == 0.0
    assert gradient_error(np.zeros(3), np.array([0.0, 1.0, 0.0])) == 1.0
    assert gradient_error(np.array([np.nan]), np.array([1.0])) == float("inf")
    with pytest.raises(ValueError, match="same shape"):
        gradient_error(np.zeros(3), np.zeros(4))


def test_x_is_left_unchanged_and_views_are_safe():
    x = np.arange(6.0).reshape(2, 3)
    before = x.copy()
    numeric = numeric_gradient(lambda t: t, x, np.ones((2, 3)))  # f returns x itself (a view)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(numeric, np.ones((2, 3)), rtol=1e-10)


def test_bad_arguments_are_rejected():
    x = np.zeros((2, 2))
    with pytest.raises(TypeError, match="x must be float64"):
        numeric_gradient(np.sin, x.astype(np.float32), np.ones((2, 2)))
    with pytest.raises(TypeError, match="grad_out must be a NumPy array"):
        numeric_gradient(np.sin, x, [[1.0, 1.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match="grad_out must have the shape of f"):
        numeric_gradient(np.sin, x, np.ones((2, 3)))
    with pytest.raises(ValueError, match="eps"):
        numeric_gradient(np.sin, x, np.ones((2, 2)), eps=0)
