"""silu_grad against the float64 reference: dtypes x shapes x broadcasting,
eager and under jit."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import jax_ascend_silu as jas
import reference
from jax_ascend_silu import _ffi

# Every test here runs on each platform present (conftest.py: CPU, and a CUDA GPU if any).
pytestmark = pytest.mark.usefixtures("platform")

DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16]

# (grad_output shape, x shape): ranks 0 to 8, odd sizes, broadcasting both ways.
SHAPES = [
    ((), ()),
    ((1,), (1,)),
    ((7,), (7,)),
    ((33, 17), (33, 17)),
    ((3, 5, 7), (3, 5, 7)),
    ((2, 3, 1, 5), (2, 3, 1, 5)),
    ((2, 1, 3, 1, 2), (2, 1, 3, 1, 2)),
    ((2, 3, 2, 3, 2, 3), (2, 3, 2, 3, 2, 3)),
    ((1, 2, 1, 3, 1, 2, 1), (1, 2, 1, 3, 1, 2, 1)),
    ((2, 1, 2, 1, 2, 1, 2, 3), (2, 1, 2, 1, 2, 1, 2, 3)),
    ((4097,), (4097,)),
    ((257, 129), (257, 129)),
    ((5, 7), (7,)),  # x broadcast (its s'(x) is computed once, in the workspace)
    ((7,), (5, 7)),  # grad_output broadcast
    ((5, 1), (1, 7)),  # both broadcast
    ((), (3, 4)),
    ((3, 4), ()),
    ((2, 1, 4, 1, 3, 1, 2, 1), (1, 3, 1, 5, 1, 2, 1, 3)),
    ((0,), (0,)),
    ((3, 0), (1,)),
    ((600, 300), (600, 1)),  # large enough to run on several threads
]


def _ids(shapes):
    g, x = shapes
    return f"g{list(g)}-x{list(x)}".replace(" ", "")


def _inputs(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    g_shape, x_shape = shapes
    g = rng.standard_normal(g_shape).astype(dtype)
    x = (rng.standard_normal(x_shape) * 4).astype(dtype)
    return g, x


_check = reference.assert_silu_grad


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shapes", SHAPES, ids=_ids)
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_matches_float64_reference(shapes, dtype, mode):
    g, x = _inputs(shapes, dtype)
    fn = jas.silu_grad if mode == "eager" else jax.jit(jas.silu_grad)
    _check(fn(jnp.asarray(g), jnp.asarray(x)), g, x, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_special_values(dtype):
    x = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 1.0, -1.0, 20.0, -20.0], dtype)
    g = np.full(x.shape, 3.0, dtype)
    out = np.asarray(jas.silu_grad(g, x)).astype(np.float64)
    np.testing.assert_array_equal(out[:2], [3.0, 0.0])  # the limits, not NaN
    assert np.isnan(out[2])
    # s'(x) < 0 below the root, so its limit at -inf is -0: g*s' is a zero of g's opposite sign
    # (whole vectors of -inf take the kernel's rare path; a lone -inf its general path).
    for x_neg in (x, np.full(64, -np.inf, dtype)):
        signs = np.signbit(np.asarray(jas.silu_grad(np.array([3.0, -3.0], dtype)[:, None], x_neg)).astype(np.float64))
        assert signs[0][x_neg == -np.inf].all() and not signs[1][x_neg == -np.inf].any()
    _check(jas.silu_grad(g, x), g, x, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_nan_grad_output_propagates(dtype):
    g = np.array([np.nan, 1.0], dtype)
    x = np.array([2.0, np.nan], dtype)
    assert np.isnan(np.asarray(jas.silu_grad(g, x)).astype(np.float64)).all()


def test_python_scalar_takes_array_dtype():
    x = jnp.linspace(-3, 3, 5, dtype=jnp.bfloat16)
    out = jas.silu_grad(2.0, x)
    assert out.dtype == jnp.bfloat16
    _check(out, np.full(x.shape, 2.0, ml_dtypes.bfloat16), np.asarray(x), ml_dtypes.bfloat16)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_grad_of_silu_matches_jax_nn_silu(dtype):
    x = jnp.asarray(np.random.default_rng(1).standard_normal((64, 33)) * 3, dtype)
    ours = jax.jit(jax.grad(lambda v: jas.silu(v).astype(jnp.float32).sum()))(x)
    _check(ours, np.ones(x.shape, dtype), np.asarray(x), dtype)
    native = jax.grad(lambda v: jax.nn.silu(v).astype(jnp.float32).sum())(x)
    tol = {np.float32: 1e-5, np.float16: 2e-3, ml_dtypes.bfloat16: 2e-2}[dtype]
    np.testing.assert_allclose(np.asarray(ours, np.float32), np.asarray(native, np.float32), rtol=tol, atol=tol)


def test_forward_is_jax_nn_silu():
    x = jnp.linspace(-6, 6, 101)
    np.testing.assert_array_equal(jas.silu(x), jax.nn.silu(x))


def test_lowered_gradient_contains_the_custom_call():
    x = jnp.ones((8, 8), jnp.float32)
    text = jax.jit(jax.grad(lambda v: jas.silu(v).sum())).lower(x).as_text()
    assert "stablehlo.custom_call @jax_ascend_silu_silu_grad" in text
    compiled = jax.jit(jax.grad(lambda v: jas.silu(v).sum())).lower(x).compile().as_text()
    assert "jax_ascend_silu_silu_grad" in compiled


@pytest.mark.parametrize("backend", _ffi.BACKENDS, ids=lambda b: b.name)
def test_every_platform_lowers_to_one_call_with_one_result(backend):
    # The workspace is taken by the handler at run time on every platform, so
    # the call has the result alone, with or without broadcasting (x broadcast:
    # the CPU kernel's phase 1 asks for a workspace).
    platform = backend.lowering_platform or "tpu"  # any platform without its own rule gets the default one
    g = jnp.ones((6, 10), jnp.bfloat16)
    for x in (jnp.ones((10,), jnp.bfloat16), g):
        text = jax.jit(jas.silu_grad).trace(g, x).lower(lowering_platforms=(platform,)).as_text()
        (call,) = [line for line in text.splitlines() if f"stablehlo.custom_call @{_ffi.TARGET}" in line]
        # Up to rank 8 the kernel sees the user's shapes (it merges dimensions itself).
        assert call.rstrip().endswith("-> tensor<6x10xbf16>"), call
        assert "ui8" not in text


def test_the_source_root_imports_the_built_package(tmp_path):
    # From the repository root, `python -m jax_ascend_silu` finds the package
    # folder first (cwd leads sys.path); the compiled module must load with it.
    import pathlib
    import subprocess
    import sys

    root = pathlib.Path(__file__).resolve().parents[1]
    code = "import jax_ascend_silu as j, pathlib; print(pathlib.Path(j.__file__).parent); print(j.backends()['cpu'])"
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    package_dir, cpu = done.stdout.splitlines()[-2:]
    assert pathlib.Path(package_dir) == root / "jax_ascend_silu"
    assert "'compiled': True" in cpu and "'platforms': ['cpu']" in cpu


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16], ids=lambda d: np.dtype(d).name)
def test_large_grad_output_meets_tiny_derivative(dtype):
    # Regression: s'(x) for x < -87 is subnormal in float32; a huge grad_output
    # makes the product a normal number whose bits must all be right.
    x = np.array([-64.5, -88.0, -90.0, -120.0, -150.0, -180.0, -200.0, -260.0, -np.inf], dtype)
    g = np.full(x.shape, 3.0e38, dtype)
    for fn in (jas.silu_grad, jax.jit(jas.silu_grad)):
        out = fn(g, x)
        _check(out, g, x, dtype)
        assert np.all(np.asarray(out, np.float64)[:6] < 0)  # nonzero where the exact value is representable
