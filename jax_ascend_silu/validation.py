"""Trace-time checks on silu_grad's operands: dtypes, ranks, broadcasting.

Errors name the argument, its shape and its dtype, and are raised before
anything reaches XLA.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

SUPPORTED_DTYPES = (np.dtype(jnp.float32), np.dtype(jnp.float16), np.dtype(jnp.bfloat16))
MAX_RANK = 8


def describe(aval) -> str:
    return f"{np.dtype(aval.dtype).name}{list(aval.shape)}"


def check_dtype(name: str, aval) -> None:
    dtype = np.dtype(aval.dtype)
    if dtype not in SUPPORTED_DTYPES:
        raise TypeError(
            f"silu_grad: {name} has dtype {dtype.name} (shape {tuple(aval.shape)}); "
            "supported dtypes are float32, float16 and bfloat16"
        )


def check_rank(name: str, aval) -> None:
    if len(aval.shape) > MAX_RANK:
        raise ValueError(
            f"silu_grad: {name} has rank {len(aval.shape)} (shape {tuple(aval.shape)}, dtype "
            f"{np.dtype(aval.dtype).name}); at most {MAX_RANK} dimensions are supported"
        )


def broadcast_operands(grad_output, x) -> tuple[tuple[int, ...], np.dtype]:
    """The result shape and dtype of silu_grad(grad_output, x), or a clear error."""
    check_dtype("grad_output", grad_output)
    check_dtype("x", x)
    if np.dtype(grad_output.dtype) != np.dtype(x.dtype):
        raise TypeError(
            f"silu_grad: grad_output ({describe(grad_output)}) and x ({describe(x)}) must have the "
            "same dtype"
        )
    check_rank("grad_output", grad_output)
    check_rank("x", x)
    try:
        shape = tuple(int(d) for d in np.broadcast_shapes(tuple(grad_output.shape), tuple(x.shape)))
    except ValueError:
        raise ValueError(
            f"silu_grad: shapes of grad_output ({describe(grad_output)}) and x ({describe(x)}) "
            "do not broadcast (NumPy rules)"
        ) from None
    return shape, np.dtype(x.dtype)
