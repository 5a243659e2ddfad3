"""``silu`` in forward mode, in reverse mode (one SiluGrad call per SiLU), and
on inputs the kernel does not take (float64 with x64 on), where
it runs jax.nn.silu. (The Quickstart of README.md and docs/getting-started.md runs,
with and without x64, in tests/test_docs.py.)"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_ascend_silu as jas
import reference
from checks import HLO_CALL, custom_calls

TOLERANCE = {np.dtype(np.float32): (2e-6, 1e-7), np.dtype(np.float16): (2e-3, 1e-4),
             np.dtype("bfloat16"): (1e-2, 1e-3)}


def _three_silus(x):
    return jnp.sum(jas.silu(jas.silu(x) * 0.5 + jas.silu(x[::-1])))


@pytest.mark.parametrize("dtype", reference.DTYPES, ids=lambda d: d.name)
def test_jvp_matches_jax_nn_silu(dtype):
    x = np.linspace(-10, 10, 101).astype(dtype)
    t = np.random.default_rng(0).standard_normal(101).astype(dtype)
    y, y_dot = jax.jit(lambda x, t: jax.jvp(jas.silu, (x,), (t,)))(x, t)
    assert y.dtype == y_dot.dtype == dtype
    rtol, atol = TOLERANCE[np.dtype(dtype)]
    wide = x.astype(np.float64)
    np.testing.assert_allclose(np.asarray(y, np.float64), wide / (1 + np.exp(-wide)), rtol=rtol, atol=atol)
    exact = reference.silu_grad(t.astype(np.float64), wide)
    np.testing.assert_allclose(np.asarray(y_dot, np.float64), exact, rtol=rtol, atol=atol)


def test_jacfwd_equals_jacrev_and_jax_nn_silu():
    x = np.linspace(-4, 4, 9, dtype=np.float32)
    fwd = jax.jacfwd(jas.silu)(x)
    np.testing.assert_allclose(fwd, jax.jacrev(jas.silu)(x), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(fwd, jax.jacfwd(jax.nn.silu)(x), rtol=1e-6, atol=1e-7)
    assert np.count_nonzero(fwd - np.diag(np.diag(fwd))) == 0


def test_forward_mode_under_vmap_and_linearize():
    x = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)
    t = np.ones_like(x)
    batched = jax.vmap(lambda a, b: jax.jvp(jas.silu, (a,), (b,))[1])(x, t)
    np.testing.assert_allclose(batched, jax.jvp(jax.nn.silu, (x,), (t,))[1], rtol=1e-6, atol=1e-7)
    _, f_lin = jax.linearize(jas.silu, x)
    np.testing.assert_allclose(f_lin(2 * t), 2 * batched, rtol=1e-6, atol=1e-7)
    # The transpose of the linearised function is the backward pass: the kernel.
    (ct,) = jax.linear_transpose(f_lin, x)(t)
    np.testing.assert_allclose(ct, batched, rtol=1e-6, atol=1e-7)


def test_reverse_mode_runs_one_silu_grad_per_silu_and_forward_mode_none():
    x = np.linspace(-3, 3, 16, dtype=np.float32)
    assert custom_calls(jax.grad(_three_silus), x) == 3
    assert custom_calls(jax.value_and_grad(_three_silus), x) == 3
    assert custom_calls(lambda x: jax.jvp(_three_silus, (x,), (x,)), x) == 0
    np.testing.assert_allclose(
        jax.grad(_three_silus)(x),
        jax.grad(lambda v: jnp.sum(jax.nn.silu(jax.nn.silu(v) * 0.5 + jax.nn.silu(v[::-1]))))(x),
        rtol=1e-5, atol=1e-6)


def test_weak_typed_python_scalars():
    assert jax.grad(jas.silu)(3.0) == pytest.approx(float(jax.grad(jax.nn.silu)(3.0)), rel=1e-6)
    assert jax.jvp(jas.silu, (3.0,), (2.0,))[1] == pytest.approx(2 * float(jax.grad(jax.nn.silu)(3.0)), rel=1e-6)


def test_float64_runs_jax_nn_silu_with_x64():
    with jax.enable_x64(True):
        x = jnp.linspace(-6.0, 6.0, 25)
        assert x.dtype == jnp.float64
        y = jas.silu(x)
        assert y.dtype == jnp.float64
        np.testing.assert_array_equal(y, jax.nn.silu(x))

        def loss(f):
            return lambda v: jnp.sum(f(v) ** 2)

        np.testing.assert_array_equal(jax.grad(loss(jas.silu))(x), jax.grad(loss(jax.nn.silu))(x))
        np.testing.assert_array_equal(jax.jvp(jas.silu, (x,), (x,))[1], jax.jvp(jax.nn.silu, (x,), (x,))[1])
        assert custom_calls(jax.grad(loss(jas.silu)), x) == 0
        # float32 keeps the kernel with x64 on.
        assert custom_calls(jax.grad(loss(jas.silu)), x.astype(jnp.float32)) == 1


def test_rank_above_eight_runs_the_kernel():
    # The lowering merges dimensions, so the kernel's own limit of 8 never shows.
    x = jnp.full((1, 2) * 5, -0.5, jnp.float32)
    assert custom_calls(jax.grad(lambda v: jnp.sum(jas.silu(v))), x) == 1
    g = jax.grad(lambda v: jnp.sum(jas.silu(v)))(x)
    reference.assert_silu_grad(g, np.ones(x.shape, np.float32), np.asarray(x), np.float32)


def test_forward_and_reverse_mode_on_sharded_arrays_and_in_shard_map():
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    devices = jax.devices("cpu")
    assert len(devices) >= 8, "needs the 8 CPU devices tests/conftest.py sets up"
    mesh = Mesh(np.array(devices[:8]), ("data",))
    x = jax.device_put(np.linspace(-3, 3, 64 * 8, dtype=np.float32).reshape(64, 8), NamedSharding(mesh, P("data")))
    jvp = jax.jit(lambda a, t: jax.jvp(jas.silu, (a,), (t,))[1])
    hlo = jvp.lower(x, x).compile().as_text()
    assert not any(kind in hlo for kind in ("all-gather", "all-reduce", "all-to-all"))
    np.testing.assert_allclose(jvp(x, x), jax.jvp(jax.nn.silu, (x,), (x,))[1], rtol=1e-6, atol=1e-6)

    def both(f):
        return lambda a: jax.grad(lambda v: f(v).sum())(a) + jax.jvp(f, (a,), (a,))[1]

    inside = jax.jit(jax.shard_map(both(jas.silu), mesh=mesh, in_specs=P("data"), out_specs=P("data")))
    np.testing.assert_allclose(inside(x), both(jax.nn.silu)(x), rtol=1e-6, atol=1e-6)
    assert inside.lower(x).compile().as_text().count(HLO_CALL) == 1
