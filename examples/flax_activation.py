"""jax_ascend_silu in Flax (nnx), two ways.

1. Your own model: pass ``jax_ascend_silu.silu`` where Flax takes an
   activation function.
2. A model you don't own, written with ``nnx.silu`` (or ``jax.nn.silu``,
   ``jax.nn.swish``, ``flax.linen.silu``): leave its code alone and wrap the
   function you differentiate in ``jax_ascend_silu.route``.

Both train a few steps and compare gradients with plain Flax. Run with
``pip install '.[flax]'`` then ``python examples/flax_activation.py``; it exits
non-zero if a gradient disagrees or the custom call is missing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import jax
import jax.numpy as jnp
from flax import nnx

import jax_ascend_silu as jas

TARGET = 'custom_call_target="jax_ascend_silu_silu_grad"'


class MLP(nnx.Module):
    """A two-hidden-layer MLP taking its activation as an argument."""

    def __init__(self, sizes: tuple[int, ...], *, activation: Callable = nnx.silu, rngs: nnx.Rngs):
        self.layers = nnx.List([nnx.Linear(a, b, rngs=rngs) for a, b in zip(sizes[:-1], sizes[1:])])
        self.activation = activation

    def __call__(self, x: jax.Array) -> jax.Array:
        for layer in self.layers[:-1]:
            x = self.activation(layer(x))
        return self.layers[-1](x)


class LibraryBlock(nnx.Module):
    """Stands for third-party code: hard-wired to nnx.silu, not to be edited."""

    def __init__(self, din: int, dout: int, *, rngs: nnx.Rngs):
        self.up = nnx.Linear(din, 4 * din, rngs=rngs)
        self.down = nnx.Linear(4 * din, dout, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.down(nnx.silu(self.up(x)))


def mse(model: nnx.Module, x: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.mean((model(x) - y) ** 2)


def train(model: nnx.Module, loss: Callable, x: jax.Array, y: jax.Array, steps: int, lr: float = 0.05):
    """Plain SGD on the model's parameters, functional style (nnx.split/merge):
    ``loss(params)`` is a pure function, as jax.grad and route expect."""
    graphdef, params = nnx.split(model, nnx.Param)

    def loss_of_params(params):
        return loss(nnx.merge(graphdef, params), x, y)

    @jax.jit
    def step(params):
        value, grads = jax.value_and_grad(loss_of_params)(params)
        return jax.tree.map(lambda p, g: p - lr * g, params, grads), value

    for _ in range(steps):
        params, value = step(params)
    program = step.lower(params).compile().as_text()
    return params, float(value), program.count(TARGET), loss_of_params


def largest_difference(a, b) -> float:
    return max(float(jnp.max(jnp.abs(u - v))) for u, v in zip(jax.tree.leaves(a), jax.tree.leaves(b)))


def main(steps: int = 50, out=None) -> int:
    out = out or sys.stdout
    kx, ky = jax.random.split(jax.random.PRNGKey(0))
    x = jax.random.normal(kx, (64, 8))
    y = jnp.sin(x[:, :2]) + 0.1 * jax.random.normal(ky, (64, 2))
    ok = True

    # 1. jax_ascend_silu.silu as the activation of a model you write.
    ours = MLP((8, 32, 32, 2), activation=jas.silu, rngs=nnx.Rngs(0))
    plain = MLP((8, 32, 32, 2), activation=nnx.silu, rngs=nnx.Rngs(0))
    p_ours, loss_ours, calls, grad_fn = train(ours, mse, x, y, steps)
    _, loss_plain, _, plain_fn = train(plain, mse, x, y, steps)
    diff = largest_difference(jax.grad(grad_fn)(p_ours), jax.grad(plain_fn)(p_ours))
    ok &= calls == 2 and diff < 1e-5
    print(f"activation=jas.silu: loss {loss_ours:.5f} (nnx.silu: {loss_plain:.5f}), "
          f"{calls} SiluGrad custom calls, gradient difference {diff:.1e}", file=out)

    # 2. An unmodified model, its loss wrapped in route.
    block = LibraryBlock(8, 2, rngs=nnx.Rngs(1))
    p_routed, loss_routed, calls, routed_fn = train(block, jas.route(mse), x, y, steps)
    _, loss_orig, calls_orig, orig_fn = train(block, mse, x, y, steps)
    diff = largest_difference(jax.grad(routed_fn)(p_routed), jax.grad(orig_fn)(p_routed))
    ok &= calls == 1 and calls_orig == 0 and diff < 1e-5
    print(f"route(loss) on an unmodified nnx.silu model: loss {loss_routed:.5f} "
          f"(unrouted: {loss_orig:.5f}), {calls} SiluGrad custom call (unrouted: {calls_orig}), "
          f"gradient difference {diff:.1e}", file=out)
    print("OK" if ok else "FAIL", file=out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
