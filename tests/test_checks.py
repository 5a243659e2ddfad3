"""The suite's comparison of gradients (checks.assert_trees_close) judges a leaf against its scale, so two
programs that sum a matmul in different orders agree, and still tells a wrong SiLU derivative apart."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_ascend_silu as jas
from checks import assert_trees_close


def _silu_with_derivative(derivative):
    @jax.custom_jvp
    def f(x):
        return jax.nn.silu(x)

    @f.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), derivative(x) * t

    return f


def _true(x):
    s = jax.nn.sigmoid(x)
    return s * (1 + x * (1 - s))


WRONG = {
    "sigmoid": jax.nn.sigmoid,  # silu's derivative mistaken for its gate
    "1e-4 high": lambda x: _true(x) * (1 + 1e-4),
    "x shifted": lambda x: _true(x + 1e-3),
}


def _grad(silu, g, u):
    # The matmul whose cancellation the scale-based comparison is for.
    return jax.grad(lambda g, u: jnp.sum((silu(g) @ u.T) ** 2), argnums=(0, 1))(g, u)


def _operands(seed):
    rng = np.random.default_rng(seed)
    return jnp.asarray(rng.standard_normal((6, 40)) * 4, jnp.float32), jnp.asarray(rng.standard_normal((6, 40)), jnp.float32)


@pytest.mark.parametrize("seed", range(3))
def test_routed_gradient_through_a_matmul_matches(seed):
    g, u = _operands(seed)
    assert_trees_close(jax.jit(lambda g, u: _grad(jas.route(jax.nn.silu), g, u))(g, u), _grad(jax.nn.silu, g, u))


@pytest.mark.parametrize("name", list(WRONG))
def test_a_wrong_silu_derivative_still_fails(name):
    g, u = _operands(0)
    # The true derivative through custom_jvp passes, so only the derivative differs below.
    assert_trees_close(_grad(_silu_with_derivative(_true), g, u), _grad(jax.nn.silu, g, u))
    with pytest.raises(AssertionError):
        assert_trees_close(_grad(_silu_with_derivative(WRONG[name]), g, u), _grad(jax.nn.silu, g, u))


def test_nan_and_infinity_must_sit_at_the_same_places():
    with pytest.raises(AssertionError):
        assert_trees_close([jnp.array([1.0, jnp.nan])], [jnp.array([1.0, 1.0])])
    with pytest.raises(AssertionError):
        assert_trees_close([jnp.array([1.0, jnp.inf])], [jnp.array([1.0, 1e30])])
    assert_trees_close([jnp.array([1.0, jnp.nan, -jnp.inf])], [jnp.array([1.0, jnp.nan, -jnp.inf])])
