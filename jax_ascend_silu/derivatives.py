"""SiLU's first and second derivatives in plain ``jax.numpy``.

The JVP rules use these: written as ordinary jnp code they fuse with their
neighbours, transpose, batch and shard like any elementwise op. Both return
float32 (or wider) for any input dtype, so callers round a whole product once.
At x = +-inf they return their limits (as the kernel does for s'), not the NaN
that ``inf * 0`` would give.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def _with_limits(formula, x, at_pos_inf, at_neg_inf):
    """formula(x) in float32 or wider, with the given limits at +-inf."""
    wide = wide_float(x)
    inf = jnp.isinf(wide)
    safe = jnp.where(inf, jnp.zeros_like(wide), wide)  # keeps inf out of every branch's gradient
    out = jnp.where(inf, jnp.where(wide > 0, at_pos_inf, at_neg_inf), formula(safe))
    return out


def wide_float(a):
    """``a`` in float32, or as is when already wider."""
    return a.astype(jnp.promote_types(a.dtype, jnp.float32))


def silu_prime(x):
    """s'(x) = sigma(x) * (1 + x * (1 - sigma(x))), the factor SiluGrad applies."""

    def formula(v):
        sig = jax.nn.sigmoid(v)
        return sig * (1 + v * (1 - sig))

    return _with_limits(formula, x, 1.0, 0.0)


def silu_second(x):
    """s''(x) = sigma(x) * (1 - sigma(x)) * (2 + x * (1 - 2 sigma(x)))."""

    def formula(v):
        sig = jax.nn.sigmoid(v)
        return sig * (1 - sig) * (2 + v * (1 - 2 * sig))

    return _with_limits(formula, x, 0.0, 0.0)
