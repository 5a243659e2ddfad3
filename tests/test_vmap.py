"""vmap of silu_grad and of the primitive itself: any in_axes/out_axes, unbatched
and lower-rank operands, nesting, and vmap combined with grad."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_ascend_silu as jas
import reference
from checks import assert_close_at_scale

# Every test here runs on each platform present (conftest.py: CPU, and a CUDA GPU if any).
pytestmark = pytest.mark.usefixtures("platform")

FUNCTIONS = {"silu_grad": jas.silu_grad, "silu_grad_p": jas.silu_grad_p.bind}

# id: (grad_output shape, x shape, in_axes, out_axes); the batch has 4 entries.
CASES = {
    "both-axis0": ((4, 3, 5), (4, 3, 5), (0, 0), 0),
    "different-axes": ((3, 4, 5), (4, 3, 5), (1, 0), 0),
    "negative-axes": ((3, 5, 4), (3, 4, 5), (-1, -2), 0),
    "g-unbatched": ((3, 5), (4, 3, 5), (None, 0), 0),
    "x-unbatched": ((4, 3, 5), (3, 5), (0, None), 0),
    "x-lower-rank": ((4, 3, 5), (4, 5), (0, 0), 0),
    "g-lower-rank-batch-last": ((5, 4), (3, 5, 4), (-1, 2), 0),
    "g-unbatched-higher-rank": ((2, 3, 5), (4, 5), (None, 0), 0),
    "size-one-dims-both-ways": ((4, 3, 1), (1, 5, 4), (0, 2), 0),
    "scalars": ((4,), (4,), (0, 0), 0),
    "x-unbatched-scalar": ((4, 3), (), (0, None), 0),
    "out-axes-last": ((4, 3, 5), (4, 3, 5), (0, 0), -1),
    "out-axes-1-x-unbatched": ((4, 3, 5), (5,), (0, None), 1),
}


def _expected(g, x, in_axes, out_axes):
    """The float64 reference applied entry by entry, stacked at out_axes."""
    def entry(a, axis, b):
        return a if axis is None else np.take(a, b, axis=axis)

    rows = [reference.silu_grad(entry(g, in_axes[0], b), entry(x, in_axes[1], b)) for b in range(4)]
    return np.moveaxis(np.stack(rows), 0, out_axes)


@pytest.mark.parametrize("dtype", reference.DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_vmap_matches_reference(name, case, dtype):
    g_shape, x_shape, in_axes, out_axes = CASES[case]
    rng = np.random.default_rng(0)
    g = rng.standard_normal(g_shape).astype(dtype)
    x = (rng.standard_normal(x_shape) * 4).astype(dtype)
    out = jax.jit(jax.vmap(FUNCTIONS[name], in_axes=in_axes, out_axes=out_axes))(g, x)
    exact = _expected(g, x, in_axes, out_axes)
    assert out.shape == exact.shape and out.dtype == dtype
    err = reference.ulp_error(np.asarray(out), exact, dtype)
    assert err.max() <= reference.MAX_ULP[dtype], err.max()


@pytest.mark.parametrize("name", FUNCTIONS)
def test_nested_vmap_is_an_outer_product(name):
    g = np.random.default_rng(1).standard_normal((3, 5)).astype(np.float32)
    x = np.linspace(-4, 4, 20, dtype=np.float32).reshape(4, 5)
    inner = jax.vmap(FUNCTIONS[name], in_axes=(0, None))  # over rows of g
    out = jax.vmap(inner, in_axes=(None, 0))(g, x)  # over rows of x
    assert out.shape == (4, 3, 5)
    exact = reference.silu_grad(g[None, :, :], x[:, None, :])
    assert reference.ulp_error(np.asarray(out), exact, np.float32).max() <= reference.MAX_ULP[np.dtype(np.float32)]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_vmap_lowers_to_one_custom_call(name):
    g = jnp.ones((16, 8), jnp.float32)
    text = jax.jit(jax.vmap(FUNCTIONS[name], in_axes=(0, None))).lower(g, g[0]).as_text()
    assert text.count("stablehlo.custom_call @jax_ascend_silu_silu_grad") == 1


def _native_silu_grad(g, x):
    """grad_output * s'(x) from jax.nn.silu's own derivative."""
    return g * jax.grad(lambda v: jax.nn.silu(v).sum())(x)


@pytest.mark.parametrize("dtype", reference.DTYPES, ids=lambda d: d.name)
def test_vmap_of_grad_of_silu(dtype):
    x = (np.random.default_rng(2).standard_normal((6, 9)) * 3).astype(dtype)
    out = jax.jit(jax.vmap(jax.grad(lambda v: jas.silu(v).astype(jnp.float32).sum())))(x)
    reference.assert_silu_grad(out, np.ones_like(x), x, dtype)


@pytest.mark.parametrize("dtype", reference.DTYPES, ids=lambda d: d.name)
def test_grad_of_vmap_of_silu(dtype):
    x = (np.random.default_rng(3).standard_normal((6, 9)) * 3).astype(dtype)
    out = jax.jit(jax.grad(lambda v: jax.vmap(jas.silu)(v).astype(jnp.float32).sum()))(x)
    reference.assert_silu_grad(out, np.ones_like(x), x, dtype)


def test_grad_of_vmapped_silu_grad_in_both_operands():
    rng = np.random.default_rng(4)
    g = rng.standard_normal((4, 3, 5)).astype(np.float32)
    x = (rng.standard_normal((5,)) * 3).astype(np.float32)

    def loss(f, g, x):
        return (jax.vmap(f, in_axes=(0, None))(g, x) ** 2).sum()

    ours = jax.grad(loss, argnums=(1, 2))(jas.silu_grad, g, x)
    native = jax.grad(loss, argnums=(1, 2))(_native_silu_grad, g, x)
    for a, b in zip(ours, native):
        assert_close_at_scale(a, b, rtol=2e-5, atol=1e-5)


def test_vmap_of_second_derivative():
    x = np.linspace(-6, 6, 24, dtype=np.float32).reshape(4, 6)
    second = jax.vmap(jax.vmap(jax.grad(jax.grad(jas.silu))))(x)
    np.testing.assert_allclose(second, reference.silu_second_derivative(x), rtol=1e-5, atol=1e-6)
