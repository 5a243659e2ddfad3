"""SiLU with its backward pass through the SiluGrad custom call."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .op import silu_grad_overwriting as silu_grad
from .operands import check_dtype


@jax.custom_vjp
def _silu(x):
    return jax.nn.silu(x)


def _silu_fwd(x):
    return jax.nn.silu(x), x  # the residual is the input, as aclnnSiluBackward takes it


def _silu_bwd(x, grad_output):
    return (silu_grad(grad_output, x),)


_silu.defvjp(_silu_fwd, _silu_bwd)


def silu(x):
    """``x * sigmoid(x)``, differentiated by the SiluGrad kernel.

    The forward pass is ``jax.nn.silu``; ``jax.grad`` and ``jax.vjp`` run the
    backward pass as the ``jax_ascend_silu_silu_grad`` custom call.
    """
    x = jnp.asarray(x)
    check_dtype("x", jax.typeof(x))
    return _silu(x)
