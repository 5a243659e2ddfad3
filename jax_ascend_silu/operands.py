"""silu_grad's operands: which types it takes, how they broadcast, and how the
result is laid out across a batch (vmap) and across devices (sharding).

Every rule of the operator (``op.py``) that needs a shape, a dtype or a spec
reads it from here, so broadcasting is written once on the Python side.
Errors name the argument, its shape and its dtype, and are raised at trace
time, before anything reaches XLA.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec

#: The dtypes the kernel computes, by name (the C++ table is kernel/common/dtype.h).
DTYPES = {name: np.dtype(getattr(jnp, name)) for name in ("float32", "float16", "bfloat16")}
SUPPORTED_DTYPES = tuple(DTYPES.values())
MAX_RANK = 8


def kernel_takes(aval) -> bool:
    """Whether the SiluGrad kernel takes an operand of this type (dtype and rank)."""
    return np.dtype(aval.dtype) in SUPPORTED_DTYPES and len(aval.shape) <= MAX_RANK


def describe(aval) -> str:
    return f"{np.dtype(aval.dtype).name}{list(aval.shape)}"


def check_dtype(name: str, aval) -> None:
    dtype = np.dtype(aval.dtype)
    if dtype not in SUPPORTED_DTYPES:
        raise TypeError(
            f"silu_grad: {name} has dtype {dtype.name} (shape {tuple(aval.shape)}); "
            f"supported dtypes are {', '.join(DTYPES)}"
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


# ------------------------------------------------------------------ batches --

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


def sum_to_shape(a, shape):
    """The transpose of broadcasting ``shape`` up to ``a.shape``."""
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and a.shape[lead + i] != 1)
    return jnp.sum(a, axis=axes).reshape(shape) if axes else a


# ---------------------------------------------------------------- shardings --

def aligned_dims(shape, out_rank):
    """(operand dim, result dim) pairs, the operand aligned to the right."""
    lead = out_rank - len(shape)
    return [(i, lead + i) for i in range(len(shape))]


def spec_of(sharding, rank) -> tuple:
    """A NamedSharding's spec padded to ``rank`` entries (all None otherwise)."""
    spec = tuple(sharding.spec) if isinstance(sharding, NamedSharding) else ()
    return spec + (None,) * (rank - len(spec))


def _axis_names(entry) -> tuple:
    return (entry,) if isinstance(entry, str) else tuple(entry or ())


def result_spec(operands, out_shape) -> PartitionSpec:
    """The result's spec from the operands' (avals or ShapeDtypeStructs with a
    sharding): each result dim takes the mesh axes of the first operand dim
    that is not broadcast there, unless another result dim already uses them."""
    result: list = [None] * len(out_shape)
    used: set = set()
    for a in operands:
        shape = tuple(a.shape)
        spec = spec_of(a.sharding, len(shape))
        for i, j in aligned_dims(shape, len(out_shape)):
            names = set(_axis_names(spec[i]))
            if result[j] is None and names and shape[i] == out_shape[j] and not used & names:
                result[j] = spec[i]
                used |= names
    return PartitionSpec(*result)


def operand_spec(result: PartitionSpec, shape, out_shape) -> PartitionSpec:
    """An operand's spec matching the result's: broadcast dims are replicated."""
    padded = tuple(result) + (None,) * (len(out_shape) - len(result))
    dims = aligned_dims(shape, len(out_shape))
    return PartitionSpec(*(padded[j] if shape[i] == out_shape[j] else None for i, j in dims))


def varying_axes(aval) -> frozenset:
    """The manual mesh axes a value varies over inside ``jax.shard_map`` (empty
    elsewhere). Avals expose them as ``vma`` or as ``mat.varying`` depending on
    the JAX version."""
    if hasattr(aval, "vma"):
        return frozenset(aval.vma)
    mat = getattr(aval, "mat", None)
    return frozenset(mat.varying) if mat is not None else frozenset()
