"""The SiluGrad primitive: abstract evaluation, lowering to the FFI target,
eager implementation and batching.

    silu_grad(grad_output, x) = grad_output * s'(x),  s(x) = x * sigmoid(x)

with NumPy broadcasting between the two operands.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.core import Primitive
from jax.interpreters import batching, mlir

from . import _ffi
from .validation import broadcast_operands

silu_grad_p = Primitive("jax_ascend_silu_silu_grad")


def _abstract_eval(grad_output, x):
    shape, dtype = broadcast_operands(grad_output, x)
    weak = bool(getattr(grad_output, "weak_type", False) and getattr(x, "weak_type", False))
    # Reuse an operand's aval when it already has the result's shape, so
    # sharding and manual-axis information carried by avals survive.
    for aval in (grad_output, x):
        if tuple(aval.shape) == shape:
            return aval.update(shape=shape, dtype=dtype, weak_type=weak)
    return jax.core.ShapedArray(shape, dtype, weak_type=weak)


silu_grad_p.def_abstract_eval(_abstract_eval)


def _ffi_call(grad_output, x):
    """The custom call, with the workspace phase 1 asks for as an extra XLA result."""
    shape, dtype = broadcast_operands(grad_output, x)
    workspace = _ffi.workspace_size(grad_output.shape, x.shape, shape, dtype)
    result_types = (jax.ShapeDtypeStruct(shape, dtype), jax.ShapeDtypeStruct((workspace,), np.uint8))
    grad_input, _ = jax.ffi.ffi_call(_ffi.TARGET, result_types)(grad_output, x)
    return grad_input


mlir.register_lowering(silu_grad_p, mlir.lower_fun(_ffi_call, multiple_results=False), platform="cpu")

# Eager calls compile the primitive once per shape/dtype and run it.
silu_grad_p.def_impl(jax.jit(silu_grad_p.bind))


def _batch(args, dims):
    """vmap: batch dims go first; the unbatched operand broadcasts (no copy)."""
    grad_output, x = args
    g_dim, x_dim = dims
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not batching.not_mapped)
    rank = max(a.ndim - (d is not batching.not_mapped) for a, d in zip(args, dims))

    def lead(a, d):
        if d is batching.not_mapped:
            return a  # right-aligned broadcasting leaves it the trailing dims
        a = jnp.moveaxis(a, d, 0)
        # Pad with size-1 dims after the batch dim so operands stay right-aligned.
        return lax.expand_dims(a, tuple(range(1, 1 + rank - (a.ndim - 1))))

    out = silu_grad_p.bind(lead(grad_output, g_dim), lead(x, x_dim))
    assert out.shape[0] == size
    return out, 0


batching.primitive_batchers[silu_grad_p] = _batch


def silu_grad(grad_output, x):
    """SiLU backward: ``grad_output * s'(x)`` through the SiluGrad custom call.

    Args:
      grad_output: cotangent of ``silu(x)``; float32, float16 or bfloat16.
      x: the forward input, same dtype; the two broadcast (NumPy rules).
        A weakly typed operand (a Python scalar) takes the other's dtype.

    Returns:
      An array of the broadcast shape and the common dtype.

    Raises:
      TypeError: unsupported or differing dtypes.
      ValueError: shapes that do not broadcast, or rank above 8.
    """
    grad_output, x = jnp.asarray(grad_output), jnp.asarray(x)
    g_weak, x_weak = _is_weak(grad_output), _is_weak(x)
    if g_weak and not x_weak:
        grad_output = grad_output.astype(x.dtype)
    elif x_weak and not g_weak:
        x = x.astype(grad_output.dtype)
    return silu_grad_p.bind(grad_output, x)


def _is_weak(a) -> bool:
    return bool(getattr(jax.typeof(a), "weak_type", False))
