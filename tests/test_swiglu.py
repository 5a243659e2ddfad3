"""SwiGLU: swiglu, silu_mul, swiglu_grad, silu_mul_grad and swiglu_grad_p
against a float64 reference (dtypes x shapes, eager and under jit), against
JAX's autodiff of the jnp expression (reverse and forward mode, second
order, vmap), what the backward pass keeps and calls, sharding, export, and
every error case (the docstring examples run in test_docs_reference.py)."""

from __future__ import annotations

import importlib
import pickle

import jax
import jax.ad_checkpoint
import jax.numpy as jnp
import ml_dtypes
import mpmath
import numpy as np
import pytest
from jax import export
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

import jax_ascend_silu as jas
import reference
from jax_ascend_silu import _ffi

#: The module (its name is also the function's, which the package exports).
swiglu_module = importlib.import_module("jax_ascend_silu.swiglu")

DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16]
TARGET = _ffi.SWIGLU_TARGET
#: The custom call in lowered StableHLO text.
CALL = f"stablehlo.custom_call @{TARGET}"
COLLECTIVES = ("all-gather", "all-reduce", "all-to-all", "collective-permute", "reduce-scatter")
#: rtol, atol between the package and JAX's autodiff of the jnp expression,
#: which rounds every operation in the half types.
TOLERANCE = {np.dtype(np.float32): (2e-5, 2e-6), np.dtype(np.float16): (4e-3, 1e-3),
             np.dtype(ml_dtypes.bfloat16): (3e-2, 1e-2)}


# (x shape, axis) of the packed form: ranks 1 to 3, an axis other than the last.
PACKED = [((2,), -1), ((10,), -1), ((3, 8), -1), ((6, 3), 0), ((2, 6, 5), 1), ((2, 3, 4), -3)]
# (gate shape, up shape): scalars, one shape, broadcasting both ways.
PAIRS = [((), ()), ((7,), (7,)), ((3, 5, 4), (3, 5, 4)), ((5, 1), (1, 7)), ((4,), (3, 4)), ((), (2, 3))]


def _name(dtype) -> str:
    return np.dtype(dtype).name


def _shape_id(case) -> str:
    return "-".join(str(list(c)) if isinstance(c, tuple) else f"axis{c}" for c in case).replace(" ", "")


def _normal(shape, dtype, seed, scale=4.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


# --------------------------------------------------------------- reference --


def _silu64(a):
    a = np.asarray(a).astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return a / (1.0 + np.exp(-a))


def _exact_forward(a, b):
    return _silu64(a) * np.asarray(b).astype(np.float64)


def _exact_grads(g, a, b):
    """(dA, dB) to float64: g * B * s'(A) and g * silu(A)."""
    g64, b64 = np.asarray(g).astype(np.float64), np.asarray(b).astype(np.float64)
    return reference.silu_grad(g64 * b64, a), g64 * _silu64(a)


def _split(x, axis):
    return np.split(np.asarray(x), 2, axis=axis)


def _assert_ulp(result, exact, dtype):
    """Shape, dtype, and within the promised ulps (4 float32, 1 half types) of the exact value."""
    result = np.asarray(result)
    assert result.shape == np.shape(exact) and result.dtype == np.dtype(dtype)
    err = reference.ulp_error(result, exact, dtype)
    assert err.size == 0 or err.max() <= reference.MAX_ULP[np.dtype(dtype)], err.max()


def _assert_close(actual, expected, dtype):
    rtol, atol = TOLERANCE[np.dtype(dtype)]
    for u, v in zip(jax.tree.leaves(actual), jax.tree.leaves(expected)):
        assert (u.shape, u.dtype) == (v.shape, v.dtype)
        np.testing.assert_allclose(np.asarray(u, np.float64), np.asarray(v, np.float64), rtol=rtol, atol=atol)


def _native_swiglu(x, axis=-1):
    """SwiGLU as JAX users write it."""
    a, b = jnp.split(x, 2, axis=axis)
    return jax.nn.silu(a) * b


def _native_silu_mul(gate, up):
    return jax.nn.silu(gate) * up


def _mode(fn, mode):
    return fn if mode == "eager" else jax.jit(fn, static_argnames=("axis",) if fn in (jas.swiglu, jas.swiglu_grad)
                                              else ())


# ----------------------------------------------------- values, eager and jit --


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("case", PACKED, ids=_shape_id)
@pytest.mark.parametrize("dtype", DTYPES, ids=_name)
def test_swiglu_matches_float64_reference(dtype, case, mode):
    shape, axis = case
    x = _normal(shape, dtype, 0)
    out = _mode(jas.swiglu, mode)(jnp.asarray(x), axis=axis)
    _assert_ulp(out, _exact_forward(*_split(x, axis)), dtype)


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("case", PAIRS, ids=_shape_id)
@pytest.mark.parametrize("dtype", DTYPES, ids=_name)
def test_silu_mul_matches_float64_reference(dtype, case, mode):
    gate, up = _normal(case[0], dtype, 1), _normal(case[1], dtype, 2, 1.0)
    out = _mode(jas.silu_mul, mode)(gate, up)
    _assert_ulp(out, _exact_forward(gate, up), dtype)


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("case", PACKED, ids=_shape_id)
@pytest.mark.parametrize("dtype", DTYPES, ids=_name)
def test_swiglu_grad_matches_float64_reference(dtype, case, mode):
    shape, axis = case
    x = _normal(shape, dtype, 3)
    a, b = _split(x, axis)
    g = _normal(a.shape, dtype, 4, 1.0)
    dx = _mode(jas.swiglu_grad, mode)(g, x, axis=axis)
    _assert_ulp(dx, np.concatenate(_exact_grads(g, a, b), axis=axis), dtype)


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("case", [c for c in PAIRS if c[0] == c[1]], ids=_shape_id)
@pytest.mark.parametrize("dtype", DTYPES, ids=_name)
def test_silu_mul_grad_matches_float64_reference(dtype, case, mode):
    gate, up = _normal(case[0], dtype, 5), _normal(case[1], dtype, 6, 1.0)
    g = _normal(case[0], dtype, 7, 1.0)
    d_gate, d_up = _mode(jas.silu_mul_grad, mode)(g, gate, up)
    exact_gate, exact_up = _exact_grads(g, gate, up)
    _assert_ulp(d_gate, exact_gate, dtype)
    _assert_ulp(d_up, exact_up, dtype)


@pytest.mark.parametrize("case", [c for c in PAIRS if c[0] != c[1]], ids=_shape_id)
@pytest.mark.parametrize("dtype", DTYPES, ids=_name)
def test_silu_mul_grad_sums_broadcast_dimensions(dtype, case):
    gate, up = _normal(case[0], dtype, 8), _normal(case[1], dtype, 9, 1.0)
    g = _normal(np.broadcast_shapes(case[0], case[1]), dtype, 10, 1.0)
    ours = jas.silu_mul_grad(g, gate, up)
    native = jax.vjp(_native_silu_mul, jnp.asarray(gate), jnp.asarray(up))[1](jnp.asarray(g))
    _assert_close(ours, native, dtype)


@pytest.mark.parametrize("shape", [(65536,), (256, 256), (16, 64, 64)], ids=str)
@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=_name)
def test_half_types_every_gate_within_half_an_ulp(dtype, shape):
    # Every half gate value (NaN and inf included) with up and grad_output
    # drawn from the type, zeros, extremes and subnormals among them
    # (infinite ones: test_special_values): the
    # half types' results are rounded once from float32 arithmetic accurate
    # enough that they lie within 0.5 ulp plus 2^-10 of the exact value
    # (benchmarks/exhaustive_swiglu.cc's "halfpath" mode proves it on their
    # own path), NaN only where the exact value is not a number.
    gate = np.arange(65536, dtype=np.uint16).view(dtype).reshape(shape)
    rng = np.random.default_rng(7)
    info = ml_dtypes.finfo(dtype)
    specials = np.array([0.0, -0.0, float(info.max), -float(info.max), float(info.smallest_subnormal), 1.0],
                        np.float64)
    g, up = (rng.standard_normal(shape) * rng.choice([1e-3, 1.0, 30.0], size=shape)).astype(dtype), \
        rng.standard_normal(shape).astype(dtype)
    for a in (g, up):
        idx = rng.random(shape) < 0.05
        a[idx] = rng.choice(specials, size=int(idx.sum())).astype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        d_gate, d_up = jax.jit(jas.silu_mul_grad)(jnp.asarray(g), jnp.asarray(gate), jnp.asarray(up))
        exact_gate, exact_up = _exact_grads(g, gate, up)
        # silu(-inf) is -0 (the limit), which _silu64's quotient leaves NaN.
        exact_up = np.where(np.asarray(gate, np.float64) == -np.inf, g.astype(np.float64) * -0.0, exact_up)
    for result, exact in ((d_gate, exact_gate), (d_up, exact_up)):
        result = np.asarray(result)
        assert result.dtype == np.dtype(dtype) and result.shape == shape
        np.testing.assert_array_equal(np.isnan(result), np.isnan(exact))
        err = reference.ulp_error(result, exact, dtype)
        assert err.max() <= 0.5 + 2.0**-10, err.max()


@pytest.mark.parametrize("dtype", DTYPES, ids=_name)
def test_special_values(dtype):
    # A = +-inf gives the limits (dA = g*B or -0, dB = inf*g or -0), never NaN where the exact value is finite.
    a = np.array([np.inf, -np.inf, -0.0, 0.0, 30.0, -30.0, np.nan, 1.0], dtype)
    b = np.array([2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, np.nan], dtype)
    g = np.full(a.shape, 0.5, dtype)
    (dx,) = jas.swiglu_grad_p.bind(g, np.concatenate([a, b]))
    da, db = np.split(np.asarray(dx).astype(np.float64), 2)
    np.testing.assert_array_equal(da[:2], [1.0, 0.0])
    np.testing.assert_array_equal(db[:2], [np.inf, -0.0])
    assert np.signbit(da[1]) and np.signbit(db[1])
    assert np.isnan(da[6:]).all() and np.isnan(db[6]) and not np.isnan(db[7])
    finite = np.isfinite(a) & np.isfinite(b)
    exact = _exact_grads(g, a, b)
    _assert_ulp(np.asarray(dx)[:8][finite], exact[0][finite], dtype)


#: The one NaN every backend writes (NaN results carry no sign or payload of their inputs).
QUIET_NAN_BITS = {np.dtype(np.float32): 0x7FC00000, np.dtype(np.float16): 0x7E00,
                  np.dtype(ml_dtypes.bfloat16): 0x7FC0}


@pytest.mark.parametrize("dtype", DTYPES, ids=_name)
def test_nan_results_are_the_canonical_quiet_nan(dtype):
    # Every combination of specials for g, A and B, in both forms: 0 * inf (dB = g*A for A = +inf and
    # g = 0) must give the CUDA kernel's NaN, not x86's negative default NaN.
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 3e4, -40.0], dtype)
    g, a, b = (m.ravel() for m in np.meshgrid(specials, specials, specials, indexing="ij"))
    (dx,) = jas.swiglu_grad_p.bind(g, np.concatenate([a, b]))
    results = np.concatenate([np.asarray(dx), *map(np.asarray, jas.silu_mul_grad(g, a, b))])
    nan = np.isnan(results.astype(np.float32))
    assert nan.sum() > len(specials) ** 2
    bits = results.view(np.uint32 if results.itemsize == 4 else np.uint16)
    wrong = sorted({int(v) for v in bits[nan]} - {QUIET_NAN_BITS[np.dtype(dtype)]})
    assert not wrong, [hex(v) for v in wrong]


def test_primitive_forms_agree_with_the_public_functions():
    x = jnp.asarray(_normal((3, 8), np.float32, 11))
    g = jnp.asarray(_normal((3, 4), np.float32, 12))
    (dx,) = jas.swiglu_grad_p.bind(g, x)  # axis -1 by default
    np.testing.assert_array_equal(dx, jas.swiglu_grad(g, x))
    (dx0,) = jas.swiglu_grad_p.bind(g.T, x.T, axis=-2)
    np.testing.assert_array_equal(dx0, jas.swiglu_grad(g.T, x.T, axis=0))
    a, b = jnp.split(x, 2, axis=-1)
    da, db = jas.swiglu_grad_p.bind(g, a, b)
    np.testing.assert_array_equal(jnp.concatenate([da, db], -1), dx)
    np.testing.assert_array_equal(jnp.stack(jas.silu_mul_grad(g, a, b)), jnp.stack([da, db]))


def test_python_scalar_takes_the_array_dtype():
    up = jnp.linspace(-3, 3, 5, dtype=jnp.bfloat16)
    out = jas.silu_mul(1.5, up)
    assert out.dtype == jnp.bfloat16 and out.shape == (5,)
    _assert_ulp(out, _exact_forward(np.full(5, 1.5), np.asarray(up)), ml_dtypes.bfloat16)


# ------------------------------------------------ float32 near the root of s' --
# dA = g * B * s'(A) where s'(A) passes through 0 (A = x0 = -1.27846...): the
# kernel's s'(A) must keep its relative accuracy there for every (g, B), since
# the ulp count of a product depends on where g*B puts it within a binade.
# Near the root float64 is within 1e-6 ulp of the exact value (reference.py's
# expansion), so _exact_grads is the reference.

#: x0 = -1 - W(1/e), the root of s'.
ROOT = reference.X0_HI


def _factors(rng, n):
    """float32 values with random sign, significand and exponent in [-8, 8]."""
    significand = rng.uniform(1.0, 2.0, n)
    return (rng.choice([-1.0, 1.0], n) * np.ldexp(significand, rng.integers(-8, 9, n))).astype(np.float32)


def _root_window(width):
    """Every float32 A within `width` of the root (negative: the bits grow with the magnitude)."""
    first, last = np.array([ROOT + width, ROOT - width], np.float32).view(np.uint32)
    return np.arange(first, last + 1, dtype=np.uint32).view(np.float32)


def test_swiglu_grad_counterexample_near_the_root():
    # A (g, B, A) whose dA was 4.017 ulp away when s'(A) took a path of its own; the exact value from mpmath.
    g, a, b = np.float32(0.36002498865127563), np.float32(-1.276728630065918), np.float32(-0.22112686932086945)
    with mpmath.workdps(60):
        sigma = 1 / (1 + mpmath.exp(-mpmath.mpf(float(a))))
        exact = float(mpmath.mpf(float(g)) * mpmath.mpf(float(b)) * sigma * (1 + mpmath.mpf(float(a)) * (1 - sigma)))
    assert abs(exact / -3.01363506571406e-05 - 1) < 1e-13
    d_gate, _ = jas.silu_mul_grad(g[None], a[None], b[None])
    (dx,) = jas.swiglu_grad_p.bind(g[None], np.array([a, b]))
    _assert_ulp(d_gate, np.array([exact]), np.float32)
    _assert_ulp(np.asarray(dx)[:1], np.array([exact]), np.float32)


def _assert_random_factors(rng, a):
    # dA and dB of every A against random g and B, within the float32 bound of their exact values.
    g, b = _factors(rng, a.size), _factors(rng, a.size)
    d_gate, d_up = jas.silu_mul_grad(g, a, b)
    exact_gate, exact_up = _exact_grads(g, a, b)
    _assert_ulp(d_gate, exact_gate, np.float32)
    _assert_ulp(d_up, exact_up, np.float32)


def test_swiglu_grad_near_the_root_with_random_factors():
    rng = np.random.default_rng(46)
    window = _root_window(0.02)
    a = rng.choice(window, 1 << 16)
    _assert_random_factors(rng, a)


def test_swiglu_grad_worst_near_root_inputs_with_many_factors():
    # The 64 A of the window with the largest dA errors at g = B = 1, each against 4096 random (g, B).
    window = _root_window(0.02)
    ones = np.ones_like(window)
    d_gate, _ = jas.silu_mul_grad(ones, window, ones)
    err = reference.ulp_error(d_gate, _exact_grads(ones, window, ones)[0], np.float32)
    assert err.max() > 0.5  # the window holds inputs that are not correctly rounded: there is a worst
    rng = np.random.default_rng(4096)
    a = np.repeat(window[np.argsort(err)[-64:]], 4096)
    _assert_random_factors(rng, a)


def test_swiglu_grad_from_a_24_on_is_g_times_b_and_g_times_a():
    # s'(A) and sigma(A) are within 2^-30 of 1 from A = 24 on, where the fast path's pieces of e^A are no
    # numbers to test (one A in [182, 184) once took the near-root path on their account).
    a = np.arange(*np.array([182.0, 184.0], np.float32).view(np.uint32), dtype=np.uint32).view(np.float32)
    g, b = np.full_like(a, 0.75), np.full_like(a, -3.0)
    d_gate, d_up = jas.silu_mul_grad(g, a, b)
    np.testing.assert_array_equal(np.asarray(d_gate), g * b)
    np.testing.assert_array_equal(np.asarray(d_up), g * a)


# ------------------------------------------------------------ autodiff --


def _weights(shape, dtype):
    return jnp.asarray(np.random.default_rng(13).uniform(0.5, 1.5, shape), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=_name)
def test_grad_of_swiglu_matches_autodiff_and_reference(dtype):
    x = jnp.asarray(_normal((6, 10), dtype, 14))
    w = _weights((6, 5), dtype)
    ours = jax.jit(jax.grad(lambda v: (jas.swiglu(v) * w).astype(jnp.float32).sum()))(x)
    native = jax.grad(lambda v: (_native_swiglu(v) * w).astype(jnp.float32).sum())(x)
    _assert_close(ours, native, dtype)
    a, b = _split(x, -1)
    _assert_ulp(ours, np.concatenate(_exact_grads(np.asarray(w), a, b), -1), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=_name)
def test_grad_of_silu_mul_matches_autodiff(dtype):
    gate, up = jnp.asarray(_normal((4, 6), dtype, 15)), jnp.asarray(_normal((6,), dtype, 16, 1.0))
    w = _weights((4, 6), dtype)

    def loss(f):
        return jax.grad(lambda a, b: (f(a, b) * w).astype(jnp.float32).sum(), argnums=(0, 1))

    _assert_close(jax.jit(loss(jas.silu_mul))(gate, up), loss(_native_silu_mul)(gate, up), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=_name)
def test_forward_mode_matches_autodiff(dtype):
    x, t = jnp.asarray(_normal((3, 8), dtype, 17)), jnp.asarray(_normal((3, 8), dtype, 18, 1.0))
    for fn in (jas.swiglu, jax.jit(jas.swiglu)):
        _assert_close(jax.jvp(fn, (x,), (t,)), jax.jvp(_native_swiglu, (x,), (t,)), dtype)
    a, b = jnp.split(x, 2, -1)
    ta, tb = jnp.split(t, 2, -1)
    _assert_close(jax.jvp(jas.silu_mul, (a, b), (ta, tb)), jax.jvp(_native_silu_mul, (a, b), (ta, tb)), dtype)
    # One tangent zero (a symbolic zero in JAX).
    _assert_close(jax.jvp(lambda u: jas.silu_mul(a, u), (b,), (tb,)),
                  jax.jvp(lambda u: _native_silu_mul(a, u), (b,), (tb,)), dtype)


def test_forward_mode_evaluates_in_jnp():
    x = jnp.ones((4, 8), jnp.float32)
    text = jax.jit(lambda v, t: jax.jvp(jas.swiglu, (v,), (t,))).lower(x, x).as_text()
    assert "custom_call" not in text


def test_second_order_matches_autodiff():
    x = jnp.asarray(_normal((8,), np.float32, 19, 2.0))
    w = _weights((4,), np.float32)

    def loss(f):
        return lambda v: (f(v) * w).sum()

    def grad_of_grad(f):
        return jax.grad(lambda v: (jax.grad(loss(f))(v) ** 2).sum())

    for ours, native in ((jas.swiglu, _native_swiglu),
                         (lambda v: jas.silu_mul(v[:4], v[4:]), lambda v: _native_silu_mul(v[:4], v[4:]))):
        _assert_close(jax.jit(jax.hessian(loss(ours)))(x), jax.hessian(loss(native))(x), np.float32)
        _assert_close(jax.jit(grad_of_grad(ours))(x), jax.jit(grad_of_grad(native))(x), np.float32)
        third = jax.jit(jax.jacfwd(jax.hessian(loss(ours))))(x)
        np.testing.assert_allclose(third, jax.jit(jax.jacfwd(jax.hessian(loss(native))))(x), rtol=1e-4, atol=1e-5)


def test_derivatives_of_the_gradient():
    """swiglu_grad is differentiable in every operand: in grad_output it is
    linear (its transpose is the forward tangent), in x by s''."""
    x = jnp.asarray(_normal((8,), np.float32, 20, 2.0))
    g = jnp.asarray(_normal((4,), np.float32, 21, 1.0))
    w = _weights((8,), np.float32)

    def native_grad(gg, v):
        return jax.vjp(_native_swiglu, v)[1](gg)[0]

    for argnums in (0, 1, (0, 1)):
        ours = jax.grad(lambda a, b: (jas.swiglu_grad(a, b) * w).sum(), argnums=argnums)(g, x)
        native = jax.grad(lambda a, b: (native_grad(a, b) * w).sum(), argnums=argnums)(g, x)
        _assert_close(ours, native, np.float32)
    t = jnp.ones_like(x)
    _assert_close(jax.jvp(lambda v: jas.swiglu_grad(g, v), (x,), (t,)),
                  jax.jvp(lambda v: native_grad(g, v), (x,), (t,)), np.float32)
    ct = jax.linear_transpose(lambda gg: jas.swiglu_grad(gg, x), g)(w)
    _assert_close(ct, jax.linear_transpose(lambda gg: native_grad(gg, x), g)(w), np.float32)


def test_eager_vjp_in_x_moves_nothing_to_the_device():
    """Regression: the halves of x were two slices, whose transposes pad with a
    zero moved to the device eagerly, refused under jax.transfer_guard."""
    x, g = jnp.asarray(_normal((2, 8), np.float32, 39)), jnp.asarray(_normal((2, 4), np.float32, 40))
    jax.vjp(jas.swiglu_grad, g, x)[1](x)  # compiles everything the guarded call runs
    with jax.transfer_guard("disallow"):
        d_g, d_x = jax.vjp(jas.swiglu_grad, g, x)[1](x)
    assert d_g.shape == g.shape and d_x.shape == x.shape


def test_linear_transpose_in_up():
    """silu_mul(gate, up) is linear in up, as jax.nn.silu(gate) * up is."""
    gate, ct = jnp.asarray(_normal((3, 4), np.float32, 37)), jnp.asarray(_normal((3, 4), np.float32, 38))
    up = jnp.zeros((4,), jnp.float32)
    ours = jax.linear_transpose(lambda u: jas.silu_mul(gate, u), up)(ct)
    _assert_close(ours, jax.linear_transpose(lambda u: _native_silu_mul(gate, u), up)(ct), np.float32)


@pytest.mark.parametrize("name", ["swiglu", "silu_mul"])
def test_backward_pass_keeps_only_the_inputs(name, capsys):
    x = jnp.asarray(_normal((4, 8), np.float32, 22))
    if name == "swiglu":
        jax.ad_checkpoint.print_saved_residuals(lambda v: jas.swiglu(v).sum(), x)
        expected = 1
    else:
        jax.ad_checkpoint.print_saved_residuals(lambda a, b: jas.silu_mul(a, b).sum(), x[:, :4], x[:, 4:])
        expected = 2
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == expected and all("from the argument" in line for line in lines), lines


@pytest.mark.parametrize("name", ["swiglu", "silu_mul", "swiglu_axis0"])
def test_backward_pass_is_one_custom_call_per_swiglu(name):
    x = jnp.ones((8, 16), jnp.float32)
    f = {"swiglu": jas.swiglu,
         "swiglu_axis0": lambda v: jas.swiglu(v, axis=0),
         "silu_mul": lambda v: jas.silu_mul(v[:, :8], v[:, 8:])}[name]

    def two_layers(v):
        h = f(v)  # (8, 8), or (4, 16) for axis 0
        return f(jnp.concatenate([h, h], axis=0 if name == "swiglu_axis0" else 1)).sum()

    lowered = jax.jit(jax.grad(two_layers)).lower(x)
    assert lowered.as_text().count(CALL) == 2
    assert lowered.compile().as_text().count(f'custom_call_target="{TARGET}"') == 2
    assert CALL not in jax.jit(two_layers).lower(x).as_text()  # the forward is XLA's fusion


def test_lowered_call_operands_and_attribute():
    g, x = jax.ShapeDtypeStruct((3, 4), jnp.bfloat16), jax.ShapeDtypeStruct((3, 8), jnp.bfloat16)
    (call,) = [line for line in jax.jit(jas.swiglu_grad).lower(g, x).as_text().splitlines() if CALL in line]
    assert "axis = 1 : i64" in call and call.rstrip().endswith("-> tensor<3x8xbf16>"), call
    a = jax.ShapeDtypeStruct((5,), jnp.float32)
    (call,) = [line for line in jax.jit(jas.silu_mul_grad).lower(a, a, a).as_text().splitlines() if CALL in line]
    assert "axis = 0 : i64" in call and "-> (tensor<5xf32>, tensor<5xf32>)" in call, call


@pytest.mark.parametrize("form", ["packed", "pair"])
def test_ranks_past_eight_merge_around_the_split_axis(form):
    shape = (2, 1, 3, 1, 4, 1, 2, 1, 3)
    dtype = np.float32
    if form == "packed":
        x = _normal(shape, dtype, 23)
        a, b = _split(x, 4)
        g = _normal(a.shape, dtype, 24, 1.0)
        text = jax.jit(jas.swiglu_grad, static_argnames="axis").lower(g, x, axis=4).as_text()
        (call,) = [line for line in text.splitlines() if CALL in line]
        assert "-> tensor<6x4x6xf32>" in call, call
        _assert_ulp(jas.swiglu_grad(g, x, axis=4), np.concatenate(_exact_grads(g, a, b), 4), dtype)
    else:
        a, b, g = (_normal(shape, dtype, s) for s in (25, 26, 27))
        text = jax.jit(jas.silu_mul_grad).lower(g, a, b).as_text()
        (call,) = [line for line in text.splitlines() if CALL in line]
        assert "-> (tensor<144xf32>, tensor<144xf32>)" in call, call
        for got, exact in zip(jas.silu_mul_grad(g, a, b), _exact_grads(g, a, b)):
            _assert_ulp(got, exact, dtype)


def test_empty_arrays_give_empty_results_without_a_call():
    x = jnp.ones((0, 6), jnp.float32)
    assert jas.swiglu_grad(jnp.ones((0, 3)), x).shape == (0, 6)
    assert "custom_call" not in jax.jit(jas.swiglu_grad).lower(jnp.ones((0, 3)), x).as_text()
    d_gate, d_up = jas.silu_mul_grad(jnp.ones((4, 0)), jnp.ones((4, 1)), jnp.ones((0,)))
    assert d_gate.shape == (4, 1) and d_up.shape == (0,)
    np.testing.assert_array_equal(d_gate, 0)
    assert jax.grad(lambda v: jas.swiglu(v).sum())(x).shape == (0, 6)


def test_float64_runs_jax_numpy():
    with jax.enable_x64(True):
        x = jnp.asarray(_normal((3, 8), np.float64, 28))
        np.testing.assert_allclose(jas.swiglu(x), _native_swiglu(x), rtol=1e-15)
        ours = jax.grad(lambda v: jas.swiglu(v).sum())(x)
        np.testing.assert_allclose(ours, jax.grad(lambda v: _native_swiglu(v).sum())(x), rtol=1e-13)
        np.testing.assert_allclose(jas.swiglu_grad(jnp.ones((3, 4)), x), ours, rtol=1e-13)
        gate, up = jnp.split(x, 2, -1)
        np.testing.assert_allclose(jas.silu_mul(gate, up), _native_silu_mul(gate, up), rtol=1e-15)
        assert jas.silu_mul_grad(jnp.ones((3, 4)), gate, up)[0].dtype == jnp.float64
        assert "custom_call" not in jax.jit(jax.grad(lambda v: jas.swiglu(v).sum())).lower(x).as_text()


# ------------------------------------------------------------------ vmap --


def test_vmap_over_any_axis():
    x = jnp.asarray(_normal((6, 4, 8), np.float32, 29))
    g = jnp.asarray(_normal((6, 4, 4), np.float32, 30, 1.0))
    # Batched along x's axis 1; each (6, 8) example split along its axis 0.
    ours = jax.vmap(lambda v: jas.swiglu(v, axis=0), in_axes=1)(x)
    np.testing.assert_array_equal(ours, jnp.stack([jas.swiglu(x[:, i], axis=0) for i in range(4)]))
    # Batched along the last axis of both operands: examples g (6, 4), x (6, 8).
    xt = jnp.moveaxis(x, 1, 2)  # (6, 8, 4)
    ours = jax.vmap(jas.swiglu_grad, in_axes=(2, 2))(g, xt)
    np.testing.assert_array_equal(ours, jnp.stack([jas.swiglu_grad(g[..., i], xt[..., i]) for i in range(4)]))
    # One operand unbatched.
    ours = jax.vmap(jas.swiglu_grad, in_axes=(0, None))(g, x[0])
    np.testing.assert_array_equal(ours, jnp.stack([jas.swiglu_grad(g[i], x[0]) for i in range(6)]))
    up = jnp.moveaxis(x[..., 4:], 0, 1)  # (4, 6, 4), batched along axis 1
    ours = jax.vmap(jas.silu_mul_grad, in_axes=(0, None, 1))(g, x[0, :, :4], up)
    for i in range(6):
        for got, want in zip(ours, jas.silu_mul_grad(g[i], x[0, :, :4], up[:, i])):
            np.testing.assert_array_equal(got[i], want)
    per_example = jax.vmap(jax.grad(lambda v: jas.swiglu(v).sum()))(x)
    np.testing.assert_array_equal(per_example, jax.grad(lambda v: jas.swiglu(v).sum())(x))


# -------------------------------------------------------- sharding, export --


def _mesh(kind):
    return jax.make_mesh((2, 4), ("data", "model"), axis_types=(kind, kind))


@pytest.mark.parametrize("kind", [AxisType.Auto, AxisType.Explicit], ids=["auto", "explicit"])
@pytest.mark.parametrize("name", ["swiglu", "silu_mul"])
def test_sharded_gradient_runs_per_shard_without_collectives(name, kind):
    mesh = _mesh(kind)
    x = jnp.asarray(_normal((8, 16), np.float32, 31))
    if name == "swiglu":  # every axis but the split one sharded
        args = (jax.device_put(x.reshape(8, 4, 4), NamedSharding(mesh, P("data", "model", None))),)
        ours, native = jas.swiglu, _native_swiglu
    else:
        args = tuple(jax.device_put(v, NamedSharding(mesh, P("data", "model"))) for v in jnp.split(x, 2, -1))
        ours, native = jas.silu_mul, _native_silu_mul
    argnums = tuple(range(len(args)))
    fn = jax.jit(jax.grad(lambda *v: ours(*v).sum(), argnums=argnums))
    with jax.set_mesh(mesh):
        hlo = fn.lower(*args).compile().as_text()
        assert not [c for c in COLLECTIVES if f" {c}(" in hlo or f" {c}-start(" in hlo], hlo
        calls = [line for line in hlo.splitlines() if f'custom_call_target="{TARGET}"' in line]
        assert len(calls) == 1 and ("f32[4,1,4]" in calls[0] or "f32[4,2]" in calls[0]), calls  # one shard's
        _assert_close(fn(*args), jax.grad(lambda *v: native(*v).sum(), argnums=argnums)(*args), np.float32)


def test_sharded_grad_output_along_the_split_axis_is_taken_whole():
    """A cotangent sharded along the split axis (a row-parallel projection
    after the SwiGLU) is gathered, grad_output alone: x stays per shard."""
    mesh = _mesh(AxisType.Auto)
    x = jax.device_put(jnp.asarray(_normal((8, 16), np.float32, 41)), NamedSharding(mesh, P("data", None)))
    up = jax.device_put(jnp.asarray(_normal((8, 8), np.float32, 42)), NamedSharding(mesh, P("data", "model")))
    fn = jax.jit(jax.grad(lambda v, u: jas.silu_mul(jas.swiglu(v), u).sum(), argnums=(0, 1)))
    native = jax.grad(lambda v, u: _native_silu_mul(_native_swiglu(v), u).sum(), argnums=(0, 1))
    _assert_close(fn(x, up), native(x, up), np.float32)
    assert fn(x, up)[0].sharding.spec[1] is None


def test_sharded_split_axis_is_refused():
    x = jnp.asarray(_normal((8, 16), np.float32, 33))
    explicit = jax.device_put(x, NamedSharding(_mesh(AxisType.Explicit), P(None, "model")))
    with jax.set_mesh(explicit.sharding.mesh), pytest.raises(
            ValueError, match=r"swiglu: the split axis 1 of x .* is sharded over mesh axes 'model'"):
        jax.jit(jax.grad(lambda v: jas.swiglu(v).sum()))(explicit)
    auto = jax.device_put(x, NamedSharding(_mesh(AxisType.Auto), P(None, "model")))
    with pytest.raises(Exception, match=r"split axis 1 of x .* is sharded over mesh axes 'model'"):
        jax.jit(jax.grad(lambda v: jas.swiglu(v).sum())).lower(auto).compile()


def test_shard_map_splits_each_shard():
    mesh = _mesh(AxisType.Auto)
    x = jnp.asarray(_normal((8, 16), np.float32, 34))
    fn = jax.shard_map(jax.grad(lambda v: jas.swiglu(v).sum()), mesh=mesh, in_specs=P("data", "model"),
                       out_specs=P("data", "model"))
    blocks = [jax.grad(lambda v: jas.swiglu(v).sum())(x[:, 4 * i:4 * i + 4]) for i in range(4)]
    np.testing.assert_array_equal(jax.jit(fn)(x), jnp.concatenate(blocks, axis=1))


def test_export_with_symbolic_dimensions():
    batch, = export.symbolic_shape("b")
    args = (jax.ShapeDtypeStruct((batch, 8), jnp.float32), jax.ShapeDtypeStruct((batch, 4), jnp.float32))

    def fn(v, u):
        return jax.grad(lambda a, c: jas.silu_mul(jas.swiglu(a), c).sum(), argnums=(0, 1))(v, u)

    checks = [export.DisabledSafetyCheck.custom_call(TARGET)]
    exp = export.deserialize(export.export(jax.jit(fn), disabled_checks=checks)(*args).serialize())
    for n in (1, 3):
        v, u = jnp.asarray(_normal((n, 8), np.float32, 35)), jnp.asarray(_normal((n, 4), np.float32, 36))
        for got, want in zip(exp.call(v, u), jax.jit(fn)(v, u)):
            np.testing.assert_array_equal(got, want)
    assert TARGET in exp.mlir_module()


# ---------------------------------------------------------------- errors --

_F32, _F16 = jnp.ones((2, 4), jnp.float32), jnp.ones((2, 4), jnp.float16)

ERRORS = {
    "odd-size": (lambda: jas.swiglu(jnp.ones((2, 5))), ValueError, r"swiglu: x \(float32\[2, 5\]\) has odd size 5 along axis 1"),
    "odd-size-grad": (lambda: jas.swiglu_grad(jnp.ones((2, 1)), jnp.ones((2, 3)), axis=1), ValueError, r"swiglu_grad: x \(float32\[2, 3\]\) has odd size 3 along axis 1"),
    "axis-range": (lambda: jas.swiglu(_F32, axis=2), ValueError, r"swiglu: axis 2 is out of range for x \(float32\[2, 4\]\) of rank 2; pass an axis in \[-2, 1\]"),
    "axis-range-neg": (lambda: jas.swiglu_grad(_F32, _F32, axis=-3), ValueError, r"swiglu_grad: axis -3 is out of range"),
    "axis-type": (lambda: jas.swiglu(_F32, axis=1.0), TypeError, r"swiglu: axis must be an int, got float"),
    "scalar": (lambda: jas.swiglu(jnp.float32(1)), ValueError, r"swiglu: x \(float32\[\]\) is a scalar"),
    "mixed-dtypes": (lambda: jas.silu_mul(_F32, _F16), TypeError, r"silu_mul: gate \(float32\[2, 4\]\) and up \(float16\[2, 4\]\) must have the same dtype"),
    "mixed-dtypes-grad": (lambda: jas.swiglu_grad(jnp.ones((2, 2), jnp.bfloat16), _F32), TypeError, r"swiglu_grad: grad_output \(bfloat16\[2, 2\]\) and x .* must have the same dtype"),
    "no-broadcast": (lambda: jas.silu_mul(jnp.ones(3), jnp.ones(4)), ValueError, r"silu_mul: shapes of gate \(float32\[3\]\) and up \(float32\[4\]\) do not broadcast"),
    "integer": (lambda: jas.swiglu(jnp.ones(4, jnp.int32)), TypeError, r"swiglu: x has dtype int32 .*floating-point"),
    "complex": (lambda: jas.silu_mul(jnp.ones(2, jnp.complex64), jnp.ones(2, jnp.complex64)), TypeError, r"silu_mul: gate has dtype complex64"),
    "bool": (lambda: jas.silu_mul_grad(jnp.ones(2), jnp.ones(2), jnp.ones(2, bool)), TypeError, r"silu_mul_grad: up has dtype bool"),
    "python-int": (lambda: jas.silu_mul(_F32, 2), TypeError, r"silu_mul: up has dtype int32"),
    "grad-shape": (lambda: jas.swiglu_grad(_F32, _F32), ValueError, r"swiglu_grad: grad_output \(float32\[2, 4\]\) must have shape \[2, 2\]"),
    "grad-shape-pair": (lambda: jas.silu_mul_grad(jnp.ones((3, 4)), jnp.ones(4), jnp.ones(4)), ValueError, r"silu_mul_grad: grad_output \(float32\[3, 4\]\) must have shape \[4\]"),
    "primitive-dtype": (lambda: jas.swiglu_grad_p.bind(jnp.ones(2, jnp.float64), jnp.ones(4, jnp.float64)), TypeError, r"swiglu_grad_p: x has dtype float64 .* the primitive takes float32, float16, bfloat16"),
    "primitive-shapes": (lambda: jas.swiglu_grad_p.bind(jnp.ones(3), jnp.ones(3), jnp.ones(4)), ValueError, r"swiglu_grad_p: a \(float32\[3\]\) and b \(float32\[4\]\) must have one shape"),
    "primitive-pair-axis": (lambda: jas.swiglu_grad_p.bind(jnp.ones(3), jnp.ones(3), jnp.ones(3), axis=0), TypeError, r"swiglu_grad_p: axis=0 is for the packed form"),
    "transpose-in-gate": (lambda: jax.linear_transpose(lambda a: jas.silu_mul(a, jnp.ones(3)), jnp.ones(3))(jnp.ones(3)), ValueError, r"silu\(a\) \* b is linear in b alone"),
    "primitive-grad-shape": (lambda: jas.swiglu_grad_p.bind(jnp.ones(4), jnp.ones(4)), ValueError, r"swiglu_grad_p: grad_output \(float32\[4\]\) must have shape \[2\]"),
}


@pytest.mark.parametrize("case", list(ERRORS))
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_errors_at_trace_time(case, mode):
    fn, kind, message = ERRORS[case]
    with jax.enable_x64(case == "primitive-dtype"), pytest.raises(kind, match=message):
        fn() if mode == "eager" else jax.jit(fn)()


# --------------------------------------------------------------- exports --


def test_primitives_pickle_as_themselves():
    for prim in (swiglu_module.swiglu_p, swiglu_module.swiglu_tangent_p, jas.swiglu_grad_p):
        assert pickle.loads(pickle.dumps(prim)) is prim


def test_every_name_is_exported():
    for name in ("swiglu", "silu_mul", "swiglu_grad", "silu_mul_grad", "swiglu_grad_p"):
        assert name in jas.__all__ and getattr(jas, name) is getattr(swiglu_module, name)
    assert TARGET == "jax_ascend_silu_swiglu_grad"
