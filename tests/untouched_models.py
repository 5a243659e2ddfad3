"""Models written against plain JAX, standing for code a user does not own.

Nothing here imports jax_ascend_silu: test_route.py runs these functions
through ``jax_ascend_silu.route`` without editing them. Each entry of MODELS is
(init, loss, number of jax.nn.silu call sites in the loss).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax


def init_mlp(key, sizes=(6, 16, 16, 3), dtype=jnp.float32):
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        key, sub = jax.random.split(key)
        w = jax.random.normal(sub, (n_in, n_out), dtype) / jnp.sqrt(float(n_in)).astype(dtype)
        params.append({"w": w, "b": jnp.full((n_out,), 0.1, dtype)})
    return params


def _dense(layer, x):
    return x @ layer["w"] + layer["b"]


def _mse(pred, y):
    return jnp.mean((pred - y) ** 2)


def mlp_silu_loss(params, batch):
    """Two hidden layers on jax.nn.silu."""
    x, y = batch
    for layer in params[:-1]:
        x = jax.nn.silu(_dense(layer, x))
    return _mse(_dense(params[-1], x), y)


def mlp_swish_loss(params, batch):
    """The same network spelled with jax.nn.swish."""
    x, y = batch
    for layer in params[:-1]:
        x = jax.nn.swish(_dense(layer, x))
    return _mse(_dense(params[-1], x), y)


@jax.jit
def _block(layer, x):
    return x + jax.nn.silu(_dense(layer, x))


def nested_jit_loss(params, batch):
    """A jitted residual block, called inside another jit."""
    x, y = batch

    @jax.jit
    def body(params, x):
        h = jax.nn.silu(_dense(params[0], x))
        return _block(params[1], h)

    return _mse(_dense(params[-1], body(params, x)), y)


def scan_loss(params, batch):
    """A recurrence: the hidden state goes through silu at each step of lax.scan."""
    x, y = batch
    cell, readout = params[1], params[2]

    def step(h, x_t):
        h = jax.nn.silu(_dense(cell, h) + x_t)
        return h, h

    xs = jnp.broadcast_to(_dense(params[0], x), (4, *x.shape[:-1], cell["w"].shape[0]))
    h, _ = lax.scan(step, jnp.zeros_like(xs[0]), xs)
    return _mse(_dense(readout, h), y)


def control_flow_loss(params, batch):
    """silu inside jax.checkpoint, lax.cond, lax.fori_loop and lax.map."""
    x, y = batch
    h = jax.checkpoint(lambda layer, v: jax.nn.silu(_dense(layer, v)))(params[0], x)
    h = lax.cond(jnp.sum(h) > -1e9, jax.nn.silu, jnp.tanh, h)
    h = lax.fori_loop(0, 2, lambda _, v: jax.nn.silu(_dense(params[1], v)), h)
    h = lax.map(jax.nn.silu, h)
    return _mse(_dense(params[-1], h), y)


def mixed_precision_loss(params, batch):
    """A bfloat16 hidden layer between float32 ones."""
    x, y = batch
    h = jax.nn.silu(_dense(params[0], x))
    low = jax.tree.map(lambda a: a.astype(jnp.bfloat16), params[1])
    h = jax.nn.silu(_dense(low, h.astype(jnp.bfloat16))).astype(jnp.float32)
    return _mse(_dense(params[-1], h), y)


MODELS = {
    "mlp-silu": (init_mlp, mlp_silu_loss, 2),
    "mlp-swish": (init_mlp, mlp_swish_loss, 2),
    "nested-jit": (init_mlp, nested_jit_loss, 2),
    "scan": (init_mlp, scan_loss, 1),
    "control-flow": (init_mlp, control_flow_loss, 4),
    "mixed-precision": (init_mlp, mixed_precision_loss, 2),
}


def batch(key, n=5, d_in=6, d_out=3):
    kx, ky = jax.random.split(key)
    return jax.random.normal(kx, (n, d_in)) * 2.0, jax.random.normal(ky, (n, d_out))
