"""Flax models on the SiluGrad kernel: jas.silu as an activation, and route()
on unmodified linen and nnx models. Flax is optional: skipped when absent."""

import importlib.util
import io
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

flax = pytest.importorskip("flax")
from flax import linen, nnx  # noqa: E402

import jax_ascend_silu as jas  # noqa: E402
from checks import assert_trees_close, custom_calls  # noqa: E402

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "flax_activation.py"


# --- third-party style models: written against Flax alone -------------------------


class LinenMLP(linen.Module):
    @linen.compact
    def __call__(self, x):
        x = linen.silu(linen.Dense(16)(x))
        x = linen.swish(linen.Dense(16)(x))
        return linen.Dense(3)(x)


class LinenRematStack(linen.Module):
    """Lifted transforms: a rematerialised block applied by linen.scan."""

    @linen.compact
    def __call__(self, x):
        class Block(linen.Module):
            @linen.compact
            def __call__(self, carry, _):
                return carry + linen.silu(linen.Dense(carry.shape[-1])(carry)), None

        stack = linen.scan(linen.remat(Block), variable_axes={"params": 0}, split_rngs={"params": True}, length=3)
        x, _ = stack()(linen.Dense(8)(x), None)
        return linen.Dense(3)(x)


class NnxMLP(nnx.Module):
    def __init__(self, rngs):
        self.a = nnx.Linear(6, 16, rngs=rngs)
        self.b = nnx.Linear(16, 3, rngs=rngs)

    def __call__(self, x):
        return self.b(nnx.silu(self.a(x)))


def _data():
    kx, ky = jax.random.split(jax.random.PRNGKey(7))
    return jax.random.normal(kx, (5, 6)) * 2.0, jax.random.normal(ky, (5, 3))


@pytest.mark.parametrize("module, sites", [(LinenMLP, 2), (LinenRematStack, 1)], ids=["mlp", "scan-remat"])
def test_unmodified_linen_model_through_route(module, sites):
    x, y = _data()
    model = module()
    variables = model.init(jax.random.PRNGKey(0), x)

    def loss(apply):
        return lambda v: jnp.mean((apply(v, x) - y) ** 2)

    routed, original = loss(jas.route(model.apply)), loss(model.apply)
    np.testing.assert_allclose(routed(variables), original(variables), rtol=1e-6)
    assert_trees_close(jax.jit(jax.grad(routed))(variables), jax.grad(original)(variables))
    assert custom_calls(jax.grad(routed), variables) == sites
    assert custom_calls(jax.grad(original), variables) == 0


def test_unmodified_nnx_model_through_route():
    x, y = _data()
    model = NnxMLP(nnx.Rngs(0))

    def loss(model, x, y):
        return jnp.mean((model(x) - y) ** 2)

    # Functional style: parameters as a pytree.
    graphdef, params = nnx.split(model, nnx.Param)
    of_params = lambda f: lambda p: f(nnx.merge(graphdef, p), x, y)  # noqa: E731
    assert_trees_close(jax.grad(of_params(jas.route(loss)))(params), jax.grad(of_params(loss))(params))
    assert custom_calls(jax.grad(of_params(jas.route(loss))), params) == 1
    assert custom_calls(jax.grad(of_params(loss)), params) == 0
    # nnx's own transforms, with the module itself as the argument.
    grads = nnx.jit(nnx.grad(jas.route(loss)))(model, x, y)
    assert_trees_close(nnx.state(grads, nnx.Param), nnx.state(nnx.grad(loss)(model, x, y), nnx.Param))


def test_jas_silu_as_nnx_activation():
    example = _load_example()
    x, y = _data()
    ours = example.MLP((6, 16, 16, 3), activation=jas.silu, rngs=nnx.Rngs(0))
    plain = example.MLP((6, 16, 16, 3), activation=nnx.silu, rngs=nnx.Rngs(0))
    g_ours = nnx.grad(example.mse)(ours, x, y)
    g_plain = nnx.grad(example.mse)(plain, x, y)
    assert_trees_close(nnx.state(g_ours, nnx.Param), nnx.state(g_plain, nnx.Param))
    graphdef, params = nnx.split(ours, nnx.Param)
    assert custom_calls(jax.grad(lambda p: example.mse(nnx.merge(graphdef, p), x, y)), params) == 2


def test_flax_example_runs():
    out = io.StringIO()
    assert _load_example().main(steps=5, out=out) == 0
    text = out.getvalue()
    assert "2 SiluGrad custom calls" in text and "1 SiluGrad custom call (unrouted: 0)" in text
    assert text.rstrip().endswith("OK")


def _load_example():
    spec = importlib.util.spec_from_file_location("flax_activation", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
