"""Accuracy of silu_grad against exact float64 values of the rounded inputs.

Per dtype: at least a million inputs spanning [-100, 100] plus a dense sample
around x0 = -1.27846..., where s'(x) crosses zero (float32: every float within
2^15 ulps of x0 and a uniform sample of the window the kernel expands around
x0; float16/bfloat16: every finite value). The max ulp error is reported for
this package (x used once, and x broadcast, whose s'(x) the kernel computes
once into its workspace) and for JAX autodiff of jax.nn.silu on the same
inputs; the table is printed in pytest's terminal summary.
"""

import functools
from typing import NamedTuple

import jax
import ml_dtypes
import numpy as np
import pytest

import jax_ascend_silu as jas
import reference

DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16]
ROOT = reference.X0_HI


def _every_finite(dtype) -> np.ndarray:
    bits = np.arange(1 << 16, dtype=np.uint16).view(dtype)
    return bits[np.isfinite(bits.astype(np.float32))]


@functools.cache
def _inputs(dtype) -> tuple[np.ndarray, np.ndarray]:
    """(grad_output, x) of one dtype, 1-D."""
    rng = np.random.default_rng(3)
    parts = [rng.uniform(-100.0, 100.0, 1_000_000).astype(dtype)]
    if np.dtype(dtype) == np.float32:
        root_bits = np.float32(ROOT).view(np.int32) + np.arange(-(1 << 15), 1 << 15, dtype=np.int32)
        parts.append(root_bits.view(np.float32))
        parts.append((ROOT + rng.uniform(-0.6, 0.6, 200_000)).astype(np.float32))
    else:
        parts.append(_every_finite(dtype))
    x = np.concatenate(parts)
    g = rng.standard_normal(x.shape).astype(dtype)
    return g, x


class Errors(NamedTuple):
    max_ulp: float  # over results that are not wrongly NaN/inf
    at_x: float
    wrong_specials: int  # NaN or inf where the exact value is finite (or another inf)


def _errors(result, g, x, dtype) -> Errors:
    err = reference.ulp_error(np.asarray(result), reference.silu_grad(g, x), dtype).ravel()
    finite = np.where(np.isinf(err), -1.0, err)
    worst = int(np.argmax(finite))
    return Errors(float(finite[worst]), float(np.broadcast_to(x, np.shape(result)).ravel()[worst]),
                  int(np.isinf(err).sum()))


def _ours(g, x):
    return jax.jit(jas.silu_grad)(g, x)


def _ours_x_reused(g, x):
    # x broadcast over two rows of gradients: s'(x) is computed once per x.
    return jax.jit(jas.silu_grad)(np.stack([g, -g]), x)


def _jax_autodiff(g, x):
    return jax.jit(lambda g, x: jax.vjp(jax.nn.silu, x)[1](g)[0])(g, x)


@functools.cache
def _measure(dtype) -> dict[str, Errors]:
    g, x = _inputs(dtype)
    g2 = np.stack([g, -g])
    return {
        "ours": _errors(_ours(g, x), g, x, dtype),
        "ours, x reused": _errors(_ours_x_reused(g, x), g2, x, dtype),
        "JAX autodiff": _errors(_jax_autodiff(g, x), g, x, dtype),
    }


def _cell(e: Errors) -> str:
    text = f"{e.max_ulp:.4g} at x={e.at_x:+.6g}"
    return text + (f", {e.wrong_specials} NaN/inf" if e.wrong_specials else "")


def test_max_ulp_error_per_dtype(report):
    columns = ("ours", "ours, x reused", "JAX autodiff")
    lines = [f"{'dtype':9} {'inputs':>8} {'bound':>5}  " + "  ".join(f"{c:30}" for c in columns)]
    for dtype in DTYPES:
        m = _measure(dtype)
        lines.append(f"{np.dtype(dtype).name:9} {_inputs(dtype)[1].size:>8} {reference.MAX_ULP[np.dtype(dtype)]:>5}  "
                     + "  ".join(f"{_cell(m[c]):30}" for c in columns))
    report("silu_grad max ulp error against exact float64, same inputs in every column", [line.rstrip() for line in lines])
    for dtype in DTYPES:
        m, bound = _measure(dtype), reference.MAX_ULP[np.dtype(dtype)]
        for ours in ("ours", "ours, x reused"):
            assert m[ours].wrong_specials == 0 and m[ours].max_ulp <= bound, (np.dtype(dtype).name, ours, m[ours])
        theirs = m["JAX autodiff"]
        assert theirs.wrong_specials > 0 or m["ours"].max_ulp < theirs.max_ulp, (np.dtype(dtype).name, m)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_inputs_cover_the_range_and_the_root(dtype):
    g, x = _inputs(dtype)
    assert x.size > 1_000_000 and np.all(np.isfinite(g.astype(np.float32)))
    xf = x.astype(np.float64)
    assert xf.min() <= -99 and xf.max() >= 99
    # Every value of the dtype within 256 ulps of the root is among the inputs.
    if np.dtype(dtype) == np.float32:
        near = (np.float32(ROOT).view(np.int32) + np.arange(-256, 257, dtype=np.int32)).view(np.float32)
    else:
        every = _every_finite(dtype)
        ulp = float(reference.ulp_of(np.array(ROOT), dtype))
        near = every[np.abs(every.astype(np.float64) - ROOT) <= 256 * ulp]
    assert near.size >= 257
    assert np.isin(near, x).all()


def _limits(dtype):
    """(grad_output, x, expected) where the result is exact."""
    big = 65504.0 if np.dtype(dtype) == np.float16 else 3e38
    with np.errstate(over="ignore"):  # float16 has no 2e7: it becomes inf, which also gives grad_output
        x = np.array([-np.inf, np.inf, 2e7, 1e30, 3e38, big, -0.0, 0.0, np.nan, 1.5, np.nan], dtype)
    g = np.array([3.0, -2.5, 1.0, -1.0, 0.75, 2.0, -3.0, 3.0, 1.0, np.nan, np.nan], dtype)
    gf = g.astype(np.float64)
    expected = np.array([0.0, gf[1], gf[2], gf[3], gf[4], gf[5], gf[6] / 2, gf[7] / 2, np.nan, np.nan, np.nan])
    return g, x, expected


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("path", ["x once", "x reused", "eager"])
def test_exact_limits_and_nan(dtype, path):
    # x = -inf gives 0, x = +inf and huge finite x give grad_output exactly
    # (not 0, not NaN), x = -0.0 gives grad_output / 2, NaN in either is NaN.
    g, x, expected = _limits(dtype)
    if path == "x once":
        out = np.asarray(jax.jit(jas.silu_grad)(g, x))
    elif path == "x reused":
        out = np.asarray(jax.jit(jas.silu_grad)(np.stack([g, g]), x))[1]
    else:
        out = np.asarray(jas.silu_grad(g, x))
    np.testing.assert_array_equal(out.astype(np.float64), expected)


def test_jax_autodiff_misses_the_limits():
    # What the exact limits improve on: JAX autodiff gives NaN at x = +-inf.
    g, x, _ = _limits(np.float32)
    out = np.asarray(_jax_autodiff(g[:2], x[:2]))
    assert np.isnan(out).all()


def _float32_range(lo, hi):
    """Every float32 in [lo, hi] (both of one sign)."""
    ends = np.sort(np.abs(np.array([lo, hi], np.float32))).view(np.uint32)
    values = np.arange(ends[0], ends[1] + 1, dtype=np.uint32).view(np.float32)
    return -values if lo < 0 else values


@pytest.mark.parametrize("path", ["x once", "x broadcast"])
def test_float32_worst_inputs_with_many_grad_outputs(path):
    # The ulp count of g * s'(x) depends on where g puts the product within a binade, so one g per x proves
    # little: the 64 x with the largest errors at g = 1, from the window around the root and the ranges where
    # benchmarks/exhaustive_accuracy.cc --grad proof finds s'(x) farthest off before rounding (x ~ 15.25, -9.56),
    # each against 4096 random g, as a (4096, 64) array with x per column or x broadcast along the rows.
    root = reference.X0_HI
    x = np.concatenate([_float32_range(root + 0.02, root - 0.02), _float32_range(15.2, 15.3),
                        _float32_range(-9.5, -9.6)])
    ones = np.ones_like(x)
    err = reference.ulp_error(np.asarray(jas.silu_grad(ones, x)), reference.silu_grad(ones, x), np.float32)
    assert err.max() > 0.5
    worst = x[np.argsort(err)[-64:]]
    rng = np.random.default_rng(15)
    g = (rng.choice([-1.0, 1.0], (4096, 64)) * np.ldexp(rng.uniform(1.0, 2.0, (4096, 64)),
                                                        rng.integers(-8, 9, (4096, 64)))).astype(np.float32)
    xs = worst if path == "x broadcast" else np.broadcast_to(worst, g.shape).copy()
    out = np.asarray(jas.silu_grad(g, xs))
    assert out.shape == g.shape and out.dtype == np.float32
    err = reference.ulp_error(out, reference.silu_grad(g, np.broadcast_to(worst, g.shape)), np.float32)
    assert err.max() <= reference.MAX_ULP[np.dtype(np.float32)], err.max()
