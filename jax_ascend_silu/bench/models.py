"""SiluGrad inside compiled programs: many small calls in a jitted
``fori_loop``, and the training steps of an MLP and of a SwiGLU feed-forward
block, ``(silu(x @ W1) * (x @ W3)) @ W2``."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import demo
from ..activation import silu
from .elementwise import _xla_silu_grad, fresh_silu_grad
from .timing import Contender, Stats, measure


def small_calls(n: int, steps: int, repeats: int, budget_s: float) -> dict[str, Stats]:
    """``steps`` dependent SiluGrad calls on n float32 elements in one jitted
    fori_loop; stats are per call. The carry is x (grad_output stays
    positive, so x stays in (0, 1.7] and never goes subnormal); grad_output
    is loop-invariant, so it is not overwritten."""
    g = jax.random.uniform(jax.random.PRNGKey(0), (n,), jnp.float32, 0.5, 1.5)
    x = jax.random.normal(jax.random.PRNGKey(1), (n,), jnp.float32)

    def looped(step):
        return jax.jit(lambda g, x: jax.lax.fori_loop(0, steps, lambda i, x: step(g, x), x))

    stats = measure(
        [
            Contender("ours", looped(fresh_silu_grad), lambda: (g, x),
                      jax.block_until_ready),
            Contender("native", looped(_xla_silu_grad), lambda: (g, x), jax.block_until_ready),
        ],
        repeats,
        budget_s,
    )
    return {
        k: Stats(s.median / steps, s.minimum / steps, s.q1 / steps, s.q3 / steps, s.count) for k, s in stats.items()
    }


def sgd_step(loss_fn):
    """A jitted SGD step (forward, backward, update) of ``loss_fn(params, x, y, activation)``
    for a given activation: ``step(activation)(params, x, y) -> params``."""

    def step_fn(activation):
        def step(params, x, y):
            grads = jax.grad(loss_fn)(params, x, y, activation)
            return jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads)

        return jax.jit(step)

    return step_fn


def _ours_and_native(loss_fn, params, x, y, repeats: int, budget_s: float) -> dict[str, Stats]:
    step_fn = sgd_step(loss_fn)
    args = lambda: (params, x, y)  # noqa: E731
    return measure(
        [
            Contender("ours", step_fn(silu), args, jax.block_until_ready),
            Contender("native", step_fn(jax.nn.silu), args, jax.block_until_ready),
        ],
        repeats,
        budget_s,
    )


def mlp_step(hidden: int, batch: int, dtype, repeats: int, budget_s: float) -> dict[str, Stats]:
    """One jitted SGD step (forward, backward, update) of a 3-layer MLP of
    width ``hidden``, with this package's silu and with jax.nn.silu."""
    k_init, k_x, k_y = jax.random.split(jax.random.PRNGKey(0), 3)
    params = demo.init_mlp(k_init, (hidden, hidden, hidden, hidden), dtype)
    x = jax.random.normal(k_x, (batch, hidden), dtype)
    y = jax.random.normal(k_y, (batch, hidden), dtype)
    return _ours_and_native(demo.loss_fn, params, x, y, repeats, budget_s)


def swiglu_init(key: jax.Array, d: int, hidden: int, dtype=jnp.float32) -> tuple[jax.Array, jax.Array, jax.Array]:
    """(W1, W3, W2) of a SwiGLU block: d -> hidden (gate and value) -> d."""
    k1, k3, k2 = jax.random.split(key, 3)
    scale = lambda n: jnp.asarray(n**-0.5, dtype)  # noqa: E731
    return (jax.random.normal(k1, (d, hidden), dtype) * scale(d), jax.random.normal(k3, (d, hidden), dtype) * scale(d),
            jax.random.normal(k2, (hidden, d), dtype) * scale(hidden))


def swiglu(params, x: jax.Array, activation=silu) -> jax.Array:
    """The SwiGLU feed-forward block: (activation(x @ W1) * (x @ W3)) @ W2."""
    w1, w3, w2 = params
    return (activation(x @ w1) * (x @ w3)) @ w2


def swiglu_loss(params, x: jax.Array, y: jax.Array, activation=silu) -> jax.Array:
    return jnp.mean((swiglu(params, x, activation) - y) ** 2)


def swiglu_step(batch: int, d: int, hidden: int, dtype, repeats: int, budget_s: float) -> dict[str, Stats]:
    """One jitted SGD step of a SwiGLU block (batch x d inputs, hidden units),
    with this package's silu and with jax.nn.silu."""
    k_init, k_x, k_y = jax.random.split(jax.random.PRNGKey(0), 3)
    params = swiglu_init(k_init, d, hidden, dtype)
    x = jax.random.normal(k_x, (batch, d), dtype)
    y = jax.random.normal(k_y, (batch, d), dtype)
    return _ours_and_native(swiglu_loss, params, x, y, repeats, budget_s)
