"""Derivatives of every order: grad of grad, jacrev of jacrev, Hessian-vector
products, jvp of silu_grad itself, and jax.test_util.check_grads, against
jax.nn.silu's own derivatives and the float64 reference."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import jax_ascend_silu as jas
import reference

# Every test here runs on each platform present (conftest.py: CPU, and a CUDA GPU if any).
pytestmark = pytest.mark.usefixtures("platform")

# rtol/atol of a derivative computed in jnp at each dtype (rounded once).
TOLERANCE = {np.dtype(np.float32): (2e-5, 2e-6), np.dtype(np.float16): (2e-3, 2e-4),
             np.dtype("bfloat16"): (1e-2, 2e-3)}

FUNCTIONS = {"silu_grad": jas.silu_grad, "silu_grad_p": jas.silu_grad_p.bind}


def _native_silu_grad(g, x):
    """grad_output * s'(x) from jax.nn.silu's own derivative."""
    return g * jax.grad(lambda v: jax.nn.silu(v).sum())(x)


@pytest.mark.parametrize("dtype", reference.DTYPES, ids=lambda d: d.name)
def test_grad_of_grad_of_silu(dtype):
    x = np.linspace(-12, 12, 97).astype(dtype)
    second = jax.jit(jax.vmap(jax.grad(jax.grad(jas.silu))))(x)
    assert second.dtype == dtype
    rtol, atol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(second, np.float64), reference.silu_second_derivative(x.astype(np.float64)),
                               rtol=rtol, atol=atol)
    if dtype == np.float32:
        native = jax.vmap(jax.grad(jax.grad(jax.nn.silu)))(x)
        np.testing.assert_allclose(second, native, rtol=rtol, atol=atol)


def test_third_derivative_matches_jax_nn_silu():
    x = np.linspace(-8, 8, 41, dtype=np.float32)
    third = jax.vmap(jax.grad(jax.grad(jax.grad(jas.silu))))(x)
    native = jax.vmap(jax.grad(jax.grad(jax.grad(jax.nn.silu))))(x)
    np.testing.assert_allclose(third, native, rtol=1e-4, atol=1e-5)


def test_second_derivative_limits_are_zero_not_nan():
    x = jnp.array([-jnp.inf, jnp.inf], jnp.float32)
    np.testing.assert_array_equal(jax.vmap(jax.grad(jax.grad(jas.silu)))(x), [0.0, 0.0])


@pytest.mark.parametrize("outer", [jax.jacrev, jax.jacfwd], ids=["jacrev", "jacfwd"])
def test_jacobian_of_jacrev(outer):
    x = np.linspace(-3, 3, 7, dtype=np.float32)
    ours = jax.jit(outer(jax.jacrev(jas.silu)))(x)
    native = outer(jax.jacrev(jax.nn.silu))(x)
    assert ours.shape == (7, 7, 7)
    np.testing.assert_allclose(ours, native, rtol=2e-5, atol=2e-6)


def _mlp_loss(activation):
    def loss(w, a):
        return jnp.sum(activation(a @ w) ** 2)
    return loss


@pytest.mark.parametrize("mode", ["forward-over-reverse", "reverse-over-reverse"])
def test_hessian_vector_product(mode):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 8)).astype(np.float32)
    w = rng.standard_normal((8, 4)).astype(np.float32) * 0.5
    v = rng.standard_normal((8, 4)).astype(np.float32)

    def hvp(activation):
        loss = _mlp_loss(activation)
        if mode == "forward-over-reverse":
            return jax.jvp(lambda p: jax.grad(loss)(p, a), (w,), (v,))[1]
        return jax.grad(lambda p: jnp.vdot(jax.grad(loss)(p, a), v))(w)

    # float32 matmuls in full precision: a GPU's default (TF32 or bfloat16 passes) differs between the
    # jitted and the eager program by more than the tolerance.
    with jax.default_matmul_precision("highest"):
        np.testing.assert_allclose(jax.jit(lambda: hvp(jas.silu))(), hvp(jax.nn.silu), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shapes", [((3, 5), (3, 5)), ((3, 5), (5,)), ((5,), (3, 5)), ((3, 1), (1, 5))],
                         ids=lambda s: f"g{list(s[0])}-x{list(s[1])}".replace(" ", ""))
@pytest.mark.parametrize("name", FUNCTIONS)
def test_jvp_of_silu_grad(name, shapes):
    rng = np.random.default_rng(1)
    g, dg = (rng.standard_normal(shapes[0]).astype(np.float32) for _ in range(2))
    x, dx = (rng.standard_normal(shapes[1]).astype(np.float32) * 3 for _ in range(2))
    out, tangent = jax.jit(lambda *a: jax.jvp(FUNCTIONS[name], a[:2], a[2:]))(g, x, dg, dx)
    native_out, native_tangent = jax.jvp(_native_silu_grad, (g, x), (dg, dx))
    np.testing.assert_allclose(out, native_out, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(tangent, native_tangent, rtol=2e-5, atol=2e-5)
    # Linear in grad_output: the tangent along g alone is silu_grad(dg, x).
    _, along_g = jax.jvp(FUNCTIONS[name], (g, x), (dg, np.zeros_like(x)))
    reference.assert_silu_grad(along_g, np.broadcast_to(dg, along_g.shape), x, np.float32)


@pytest.mark.parametrize("shapes", [((48, 44), (48, 44)), ((48, 44), (44,))], ids=["same", "x-broadcast"])
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_silu_grad_and_the_primitive_agree_bit_for_bit(shapes, jit):
    # One JVP rule for both: same values (the custom call) and same tangents.
    rng = np.random.default_rng(7)
    g, dg = (rng.standard_normal(shapes[0]).astype(np.float32) * 4 for _ in range(2))
    x, dx = (rng.standard_normal(shapes[1]).astype(np.float32) * 4 for _ in range(2))
    results = []
    for fn in FUNCTIONS.values():
        jvp = (lambda f: lambda *a: jax.jvp(f, a[:2], a[2:]))(fn)
        results.append([np.asarray(r) for r in (jax.jit(jvp) if jit else jvp)(g, x, dg, dx)])
    (out_a, tan_a), (out_b, tan_b) = results
    np.testing.assert_array_equal(out_a.view(np.uint32), out_b.view(np.uint32))
    np.testing.assert_array_equal(tan_a.view(np.uint32), tan_b.view(np.uint32))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_transpose_in_grad_output_sums_broadcast_dims(name):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 3, 5)).astype(np.float32) * 3
    ct = rng.standard_normal((4, 3, 5)).astype(np.float32)
    g = np.zeros((3, 1), np.float32)
    (ct_g,) = jax.vjp(lambda v: FUNCTIONS[name](v, x), g)[1](ct)
    expected = reference.silu_grad(ct, x).sum(axis=(0, 2))[:, None]
    assert ct_g.shape == (3, 1)
    np.testing.assert_allclose(ct_g, expected, rtol=1e-5, atol=1e-5)
    if name == "silu_grad_p":  # the primitive's own transpose rule
        (direct,) = jax.linear_transpose(lambda v: FUNCTIONS[name](v, x), g)(ct)
        np.testing.assert_allclose(direct, expected, rtol=1e-5, atol=1e-5)


def test_check_grads_silu_up_to_order_two():
    x = np.linspace(-5, 5, 11, dtype=np.float32) + 0.05
    # eps 1e-3, not the default 1e-4: in float32 central differences, a 1-ulp
    # change in how a result rounds moves a numerical derivative by ~1e-3 at
    # eps 1e-4, half the tolerance; the order-2 check sums several of them.
    check_grads(jax.jit(jas.silu), (x,), order=2, modes=("rev",), eps=1e-3)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_check_grads_silu_grad_forward_and_reverse(name):
    rng = np.random.default_rng(3)
    g = rng.standard_normal((3, 4)).astype(np.float32)
    x = (rng.standard_normal((4,)) * 3).astype(np.float32)
    check_grads(jax.jit(FUNCTIONS[name]), (g, x), order=2, modes=("fwd", "rev"))
