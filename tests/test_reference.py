"""The float64 reference itself, against mpmath at 50 digits."""

import mpmath
import numpy as np
import pytest

import reference

mpmath.mp.dps = 50


def _exact(x: float) -> float:
    x = mpmath.mpf(x)
    s = 1 / (1 + mpmath.exp(-x))
    return float(s * (1 + x * (1 - s)))


def _points():
    rng = np.random.default_rng(0)
    x0 = reference.X0_HI
    near = x0 + np.concatenate([rng.uniform(-1e-6, 1e-6, 100), rng.uniform(-0.6, 0.6, 100)])
    float32_near = np.nextafter(np.float32(x0), np.float32(0.0)) + np.arange(-50, 50) * np.float32(1.2e-7)
    wide = rng.uniform(-100, 100, 300)
    return np.concatenate([near, float32_near.astype(np.float64), wide, [0.0, -0.0, 1e-30, -1e-30, 88.0, -88.0]])


def _exact_second(x: float) -> float:
    return float(mpmath.diff(lambda v: v / (1 + mpmath.exp(-v)), mpmath.mpf(x), 2))


def test_second_derivative_matches_mpmath():
    xs = np.concatenate([np.linspace(-40, 40, 161), [0.0, -2.3994, 2.3994, 1e-8]])
    ours = reference.silu_second_derivative(xs)
    exact = np.array([_exact_second(v) for v in xs])
    # Near its zeros (x ~ +-2.3994) s'' cancels: there the error is absolute.
    np.testing.assert_allclose(ours, exact, rtol=1e-12, atol=1e-15)
    assert reference.silu_second_derivative(np.array([np.inf]))[0] == 0.0


def test_reference_matches_mpmath_to_float64_accuracy():
    xs = _points()
    ours = reference.silu_derivative(xs)
    exact = np.array([_exact(v) for v in xs])
    rel = np.abs(ours - exact) / np.maximum(np.abs(exact), 1e-300)
    assert rel.max() < 1e-13, (xs[rel.argmax()], rel.max())


@pytest.mark.parametrize("x, expected", [(np.inf, 1.0), (-np.inf, 0.0), (0.0, 0.5), (1e30, 1.0)])
def test_reference_limits(x, expected):
    assert reference.silu_derivative(np.array([x]))[0] == expected


def test_reference_propagates_nan():
    assert np.isnan(reference.silu_derivative(np.array([np.nan]))[0])
