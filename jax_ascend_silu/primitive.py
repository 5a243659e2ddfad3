"""The SiluGrad primitive and its rules: abstract evaluation, lowering to the
FFI target per platform, eager implementation, batching, JVP and transpose.

    silu_grad(grad_output, x) = grad_output * s'(x),  s(x) = x * sigmoid(x)

with NumPy broadcasting between the two operands. Binding ``silu_grad_p``
directly works under every transformation on one device; on sharded arrays
use ``silu_grad`` (see ``partitioning.py``), which keeps the call per shard.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from . import _ffi
from .derivatives import silu_second, wide_float
from .sharding_specs import result_spec, varying_axes
from .validation import broadcast_operands, describe

silu_grad_p = Primitive("jax_ascend_silu_silu_grad")


def _abstract_eval(grad_output, x, *, overwrite_grad_output=True):
    del overwrite_grad_output  # where the result lives, not what it is
    shape, dtype = broadcast_operands(grad_output, x)
    weak = bool(getattr(grad_output, "weak_type", False) and getattr(x, "weak_type", False))
    g_vary, x_vary = varying_axes(grad_output), varying_axes(x)
    if g_vary != x_vary:
        raise ValueError(
            f"silu_grad: inside shard_map grad_output ({describe(grad_output)}) varies over mesh axes "
            f"{sorted(g_vary)} but x ({describe(x)}) over {sorted(x_vary)}; jax_ascend_silu.silu_grad "
            "aligns them (or use jax.lax.pcast(..., to='varying'))"
        )
    # Build on an operand's aval so manual-axis information survives, and give
    # the result the sharding broadcasting implies (explicitly sharded meshes
    # carry it in the type).
    base = next((a for a in (grad_output, x) if tuple(a.shape) == shape), grad_output)
    spec = result_spec((grad_output, x), shape)
    return base.update(shape=shape, dtype=dtype, weak_type=weak, sharding=base.sharding.update(spec=spec))


silu_grad_p.def_abstract_eval(_abstract_eval)


# ---------------------------------------------------------------- lowering --

def _output_aliases(grad_output, shape, overwrite: bool) -> dict[int, int] | None:
    """Write the result over grad_output when it has the result's shape: XLA
    then reuses that buffer when it is donated or dead (the kernel reads and
    writes element for element, so in-place is safe), and copies grad_output
    first when it stays alive. The primitive's ``overwrite_grad_output=False``
    asks for a fresh result instead, which the kernel writes without that copy."""
    return {0: 0} if overwrite and tuple(grad_output.shape) == tuple(shape) else None


def _call_with_xla_workspace(grad_output, x, *, overwrite_grad_output=True):
    """The custom call with the workspace phase 1 asks for as an extra XLA
    result (platforms whose FFI has no scratch allocator, i.e. CPU)."""
    shape, dtype = broadcast_operands(grad_output, x)
    workspace = _ffi.workspace_size(grad_output.shape, x.shape, shape, dtype)
    result_types = (jax.ShapeDtypeStruct(shape, dtype), jax.ShapeDtypeStruct((workspace,), np.uint8))
    aliases = _output_aliases(grad_output, shape, overwrite_grad_output)
    call = jax.ffi.ffi_call(_ffi.TARGET, result_types, input_output_aliases=aliases)
    grad_input, _ = call(grad_output, x)
    return grad_input


def _call_with_scratch_workspace(alias_output: bool):
    """The custom call with one result: accelerator handlers take any workspace
    from XLA's scratch allocator themselves (CUDA, Ascend)."""

    def call(grad_output, x, *, overwrite_grad_output=True):
        shape, dtype = broadcast_operands(grad_output, x)
        aliases = _output_aliases(grad_output, shape, alias_output and overwrite_grad_output)
        return jax.ffi.ffi_call(_ffi.TARGET, jax.ShapeDtypeStruct(shape, dtype), input_output_aliases=aliases)(
            grad_output, x)

    return call


#: How each platform runs the custom call; all lowerings are registered from here.
#: The function is traced with the shapes the call sees (per shard when partitioned).
#: None is the default rule: it serves the Ascend PJRT plugin's platform (whatever
#: its JAX name) and any other accelerator. It never writes in place: CANN does
#: not document whether aclnnSiluBackward may overwrite gradOutput.
PLATFORM_CALLS = {
    "cpu": _call_with_xla_workspace,
    "cuda": _call_with_scratch_workspace(alias_output=True),
    None: _call_with_scratch_workspace(alias_output=False),
}

for _platform, _call in PLATFORM_CALLS.items():
    mlir.register_lowering(silu_grad_p, mlir.lower_fun(_call, multiple_results=False), platform=_platform)

# Eager calls compile the primitive once per shape/dtype and run it.
silu_grad_p.def_impl(jax.jit(silu_grad_p.bind, static_argnames=("overwrite_grad_output",)))


# ---------------------------------------------------------------- batching --

def align_batched(operands, batched_dims):
    """Operands for one broadcasting call over a batch: each batched operand gets
    its batch dimension first, then size-1 dims so it right-aligns with the
    others; unbatched operands stay as they are (broadcasting supplies the batch)."""
    rank = max(a.ndim - (d is not None) for a, d in zip(operands, batched_dims))
    aligned = []
    for a, d in zip(operands, batched_dims):
        if d is not None:
            a = jnp.moveaxis(a, d, 0)
            a = lax.expand_dims(a, tuple(range(1, 1 + rank - (a.ndim - 1))))
        aligned.append(a)
    return aligned


def _batch(args, dims, **params):
    return silu_grad_p.bind(*align_batched(args, dims), **params), 0


batching.primitive_batchers[silu_grad_p] = _batch


# ------------------------------------------------------------- derivatives --

def x_tangent(grad_output, x, x_dot, shape):
    """d/dx of silu_grad applied to x_dot: grad_output * s''(x) * x_dot, rounded once."""
    t = wide_float(grad_output) * silu_second(x) * wide_float(x_dot)
    return jnp.broadcast_to(t.astype(x.dtype), shape)


def sum_to_shape(a, shape):
    """The transpose of broadcasting ``shape`` up to ``a.shape``."""
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and a.shape[lead + i] != 1)
    return jnp.sum(a, axis=axes).reshape(shape) if axes else a


# Linear in grad_output; in x the derivative is grad_output * s''(x).
ad.defjvp(
    silu_grad_p,
    lambda g_dot, g, x, **params: silu_grad_p.bind(g_dot, x, **params),
    lambda x_dot, g, x, **params: x_tangent(g, x, x_dot, np.broadcast_shapes(g.shape, x.shape)),
)


def _transpose(ct, grad_output, x, **params):
    if ad.is_undefined_primal(x):
        raise ValueError("silu_grad is linear in grad_output only; it cannot be transposed in x")
    aval = grad_output.aval
    if type(ct) is ad.Zero:
        return ad.Zero(aval), None
    return sum_to_shape(silu_grad_p.bind(ct, x, **params), aval.shape), None


ad.primitive_transposes[silu_grad_p] = _transpose
