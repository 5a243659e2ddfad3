"""The demo job: train a small SiLU MLP with this package's ``silu`` and check
its gradients against the same model built on ``jax.nn.silu``."""

from __future__ import annotations

import sys
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from .activation import silu

Params = list[tuple[jax.Array, jax.Array]]


def init_mlp(key: jax.Array, sizes: tuple[int, ...], dtype=jnp.float32) -> Params:
    """He-initialised dense layers for the given layer sizes."""
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        key, sub = jax.random.split(key)
        w = jax.random.normal(sub, (n_in, n_out), dtype) * jnp.sqrt(2.0 / n_in).astype(dtype)
        params.append((w, jnp.zeros((n_out,), dtype)))
    return params


def mlp(params: Params, x: jax.Array, activation: Callable = silu) -> jax.Array:
    for w, b in params[:-1]:
        x = activation(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss_fn(params: Params, x: jax.Array, y: jax.Array, activation: Callable = silu) -> jax.Array:
    return jnp.mean((mlp(params, x, activation) - y) ** 2)


def synthetic_data(key: jax.Array, n: int = 512, d_in: int = 16, d_out: int = 4):
    """A smooth nonlinear regression target the MLP can learn."""
    kx, kw = jax.random.split(key)
    x = jax.random.normal(kx, (n, d_in))
    w = jax.random.normal(kw, (d_in, d_out)) / jnp.sqrt(d_in)
    return x, jnp.sin(2.0 * x @ w) + 0.5 * (x @ w) ** 2


def make_train(activation: Callable, lr: float = 0.05, steps_per_call: int = 50):
    """A jitted function running `steps_per_call` SGD steps in a lax.scan;
    returns the new parameters and the loss at each step."""

    def step(params, batch):
        x, y = batch
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y, activation)
        params = jax.tree.map(lambda p, g: p - lr * g, params, grads)
        return params, loss

    @jax.jit
    def train(params, x, y):
        batches = (jnp.broadcast_to(x, (steps_per_call, *x.shape)), jnp.broadcast_to(y, (steps_per_call, *y.shape)))
        return jax.lax.scan(step, params, batches)

    return train


def max_grad_difference(params: Params, x: jax.Array, y: jax.Array) -> float:
    ours = jax.jit(jax.grad(loss_fn), static_argnums=3)(params, x, y, silu)
    native = jax.jit(jax.grad(loss_fn), static_argnums=3)(params, x, y, jax.nn.silu)
    diffs = jax.tree.leaves(jax.tree.map(lambda a, b: jnp.max(jnp.abs(a - b)), ours, native))
    return float(max(diffs))


def run(steps: int = 300, hidden: int = 64, seed: int = 0, tolerance: float = 1e-5, out=None) -> int:
    """Trains, prints progress, compares gradients; returns a process exit code."""
    out = out or sys.stdout
    key = jax.random.PRNGKey(seed)
    k_data, k_init = jax.random.split(key)
    x, y = synthetic_data(k_data)
    params = init_mlp(k_init, (x.shape[1], hidden, hidden, y.shape[1]))
    chunk = 50  # steps per compiled call (and per progress line); the last call runs what is left
    trains: dict[int, Callable] = {}
    print(f"training a {x.shape[1]}-{hidden}-{hidden}-{y.shape[1]} SiLU MLP for {steps} steps "
          f"on {jax.devices()[0].platform}", file=out)
    done = 0
    while done < steps:
        n = min(chunk, steps - done)
        if n not in trains:
            trains[n] = make_train(silu, steps_per_call=n)
        params, losses = trains[n](params, x, y)
        done += n
        print(f"  step {done:5d}  loss {float(losses[-1]):.6f}", file=out)
    diff = max_grad_difference(params, x, y)
    ok = bool(np.isfinite(diff)) and diff <= tolerance
    print(f"largest gradient difference vs jax.nn.silu: {diff:.3e} "
          f"({'OK' if ok else 'FAIL'}, tolerance {tolerance:.0e})", file=out)
    return 0 if ok else 1
