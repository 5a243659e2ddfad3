"""Float64 reference for SiluGrad and ulp-error measurement.

The reference evaluates s'(x) in a form that stays relatively accurate even at
x0 = -1.27846..., where s'(x) = 0 and the textbook formula cancels:
    x > 0:  (1 + E*(1 + x)) / (1 + E)^2,          E = exp(-x)
    x <= 0: E*g / (1 + E)^2,  g = 1 + x + E = d + c*expm1(d),  E = exp(x)
with d = x - x0 (x0 held as a double-double) and c = exp(x0) = -1 - x0.
test_reference.py checks it against mpmath.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

X0_HI = -1.2784645427610738
X0_LO = 1.1257466309409694e-16  # x0 - X0_HI
C = 0.2784645427610738  # -1 - x0, to double precision

# (significand bits including the implicit one, minimum normal exponent, max finite)
FORMATS = {
    np.dtype(np.float32): (24, -126, float(np.finfo(np.float32).max)),
    np.dtype(np.float16): (11, -14, float(np.finfo(np.float16).max)),
    np.dtype(ml_dtypes.bfloat16): (8, -126, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)),
}

DTYPES = list(FORMATS)  # float32, float16, bfloat16

# The accuracy promised per dtype, in units in the last place of the exact value.
MAX_ULP = {
    np.dtype(np.float32): 4.0,
    np.dtype(np.float16): 1.0,
    np.dtype(ml_dtypes.bfloat16): 1.0,
}

# float32 results whose error is below this are forgiven (flushed intermediates for x < -87).
ABS_FORGIVEN = 2.0**-100


def silu_derivative(x) -> np.ndarray:
    """s'(x) in float64, for float64 x (already-rounded inputs widened exactly)."""
    x = np.asarray(x, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(-np.abs(x))
        xc = np.clip(x, -1e300, 1e300)  # keeps 1 + x finite at +-inf
        d = (x - X0_HI) - X0_LO
        g = np.where(np.abs(d) < 0.5, d + C * np.expm1(d), 1.0 + xc + e)
        num = np.where(x > 0, 1.0 + e * (1.0 + xc), e * g)
        out = num / (1.0 + e) ** 2
        out = np.where(np.isneginf(x), 0.0, out)
        out = np.where(np.isposinf(x), 1.0, out)
    return out


def silu_second_derivative(x) -> np.ndarray:
    """s''(x) = sigma(x) (1 - sigma(x)) (2 - x tanh(x / 2)) in float64; 0 at +-inf."""
    x = np.asarray(x, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(-np.abs(x))
        out = e / (1.0 + e) ** 2 * (2.0 - x * np.tanh(x / 2))
    return np.where(np.isinf(x), 0.0, out)


def silu_grad(grad_output, x) -> np.ndarray:
    """The exact value (to float64) of grad_output * s'(x) for the given inputs."""
    g = np.asarray(grad_output).astype(np.float64)
    xs = np.asarray(x).astype(np.float64)
    ds = silu_derivative(xs)
    # s'(x) < 0 for every finite x below the root, even where float64 underflows
    # to 0 (x < -745): an infinite grad_output then gives an infinity, not NaN.
    ds = np.where((ds == 0) & np.isfinite(xs), -np.finfo(np.float64).tiny, ds)
    with np.errstate(invalid="ignore"):
        return g * ds


def ulp_of(exact: np.ndarray, dtype) -> np.ndarray:
    """Spacing of `dtype` values at each exact value (subnormal spacing near 0)."""
    bits, emin, _ = FORMATS[np.dtype(dtype)]
    mag = np.abs(exact)
    with np.errstate(divide="ignore", invalid="ignore"):
        exp = np.floor(np.log2(np.where(mag > 0, mag, 1.0)))
    exp = np.maximum(np.where(mag > 0, exp, emin), emin)
    return np.ldexp(1.0, (exp - (bits - 1)).astype(np.int64))


def ulp_error(result, exact: np.ndarray, dtype) -> np.ndarray:
    """|result - exact| in ulps of `dtype`; 0 where both are the same NaN/inf,
    inf where exactly one is NaN or the infinities differ."""
    dtype = np.dtype(dtype)
    r = np.asarray(result).astype(np.float64)
    exact = np.asarray(exact, np.float64)
    _, _, max_finite = FORMATS[dtype]
    # An exact value beyond the largest finite one (by half an ulp) rounds to inf.
    top = max_finite + ulp_of(np.array(max_finite), dtype) / 2
    expected_inf = np.abs(exact) >= top
    expect = np.where(expected_inf, np.copysign(np.inf, exact), exact)
    with np.errstate(invalid="ignore"):
        err = np.abs(r - expect) / ulp_of(np.where(expected_inf, max_finite, exact), dtype)
    same_special = (np.isnan(r) & np.isnan(expect)) | (np.isinf(r) & (r == expect))
    err = np.where(same_special, 0.0, err)
    err = np.where(np.isnan(err), np.inf, err)
    if dtype == np.float32:
        with np.errstate(invalid="ignore"):
            err = np.where(np.abs(r - expect) < ABS_FORGIVEN, 0.0, err)
    return err


def assert_silu_grad(result, grad_output, x, dtype) -> None:
    """result is silu_grad(grad_output, x): broadcast shape, dtype, and within
    the promised ulps of the exact value."""
    assert result.shape == np.broadcast_shapes(np.shape(grad_output), np.shape(x))
    assert result.dtype == np.dtype(dtype)
    err = ulp_error(np.asarray(result), silu_grad(grad_output, x), dtype)
    assert err.size == 0 or err.max() <= MAX_ULP[np.dtype(dtype)], err.max()
