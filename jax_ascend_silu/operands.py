"""The operations' operands: which types the kernels take, how operands
broadcast and merge their dimensions, and how a result is laid out across a
batch (vmap) and across devices (sharding).

Every rule of the operations (``op.py``, ``swiglu.py``) and of the op layer
(``_op_layer.py``, which holds the checks that raise) that needs a shape, a
dtype or a spec reads it from here, so broadcasting is written once on the
Python side.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec

#: The dtypes the kernel computes, by name: the one Python table (the C++ one is
#: kernel/common/dtype.h), read by the rules, ``silu``, ``route`` and the CLI.
DTYPES = {name: np.dtype(getattr(jnp, name)) for name in ("float32", "float16", "bfloat16")}
SUPPORTED_DTYPES = tuple(DTYPES.values())
#: The kernel's own rank limit. Users never meet it: past it the lowering
#: merges dimensions (``kernel_operands``).
MAX_RANK = 8


def kernel_takes(aval) -> bool:
    """Whether the kernels take an operand of this dtype (any rank)."""
    return np.dtype(aval.dtype) in SUPPORTED_DTYPES


def describe(aval) -> str:
    return f"{np.dtype(aval.dtype).name}{list(aval.shape)}"


def _is_one(d) -> bool:
    """Whether a dimension is statically 1 (a symbolic one never is)."""
    return isinstance(d, (int, np.integer)) and d == 1


def kernel_shapes(shapes, out_shape):
    """The shapes the kernel is called with: ``out_shape`` and each operand's
    shape (right-aligned to it) with size-1 result dimensions dropped and
    adjacent dimensions merged wherever every operand is either full in both
    or broadcast (size 1) in both. Reshaping to them is free, and the call
    computes the same elements. Returns (operand shapes, result shape)."""
    groups: list[list] = []  # [pattern: which operands are full, merged size]
    rank = len(out_shape)
    for j, n in enumerate(out_shape):
        if _is_one(n):
            continue
        pattern = tuple(
            j - (rank - len(s)) >= 0 and not _is_one(s[j - (rank - len(s))]) for s in shapes)
        if groups and groups[-1][0] == pattern:
            groups[-1][1] = groups[-1][1] * n
        else:
            groups.append([pattern, n])
    operands = [tuple(n if pattern[k] else 1 for pattern, n in groups) for k in range(len(shapes))]
    return operands, tuple(n for _, n in groups)


def kernel_operands(operands, out_shape):
    """The operands the kernel is called with and the result shape it computes.
    Up to ``MAX_RANK`` dimensions they are the user's: the kernel merges
    dimensions itself, and a reshape here would cost a copy of an aliased
    (donated) grad_output. Past it they are reshaped (``kernel_shapes``); where
    merging alone leaves more than ``MAX_RANK`` dimensions (broadcast patterns
    that alternate more than eight times), the operands are broadcast in full,
    one at a time, until it fits."""
    operands = list(operands)
    if len(out_shape) <= MAX_RANK:
        return operands, tuple(out_shape)
    shapes, merged = kernel_shapes([a.shape for a in operands], out_shape)
    for k in range(len(operands)):
        if len(merged) <= MAX_RANK:
            break
        operands[k] = jnp.broadcast_to(operands[k], out_shape)
        shapes, merged = kernel_shapes([a.shape for a in operands], out_shape)
    # Leading size-1 dimensions are left to broadcasting, as the operand had them.
    shapes = [s[next((i for i, n in enumerate(s) if not _is_one(n)), len(s)):] for s in shapes]
    return [a if tuple(a.shape) == s else a.reshape(s) for a, s in zip(operands, shapes)], merged


# ------------------------------------------------------------------ batches --

def batch_first(a, d):
    """``a`` with its batch dimension ``d`` moved first, by lax.transpose: the
    batching rules run under outer traces, where jnp's jitted moveaxis would
    enter a debug_nans(False) context (op.py)."""
    if d == 0:
        return a
    return lax.transpose(a, (d, *(i for i in range(a.ndim) if i != d)))


def align_batched(operands, batched_dims):
    """Operands for one broadcasting call over a batch: each batched operand gets
    its batch dimension first, then size-1 dims so it right-aligns with the
    others; unbatched operands stay as they are (broadcasting supplies the batch)."""
    rank = max(a.ndim - (d is not None) for a, d in zip(operands, batched_dims))
    aligned = []
    for a, d in zip(operands, batched_dims):
        if d is not None:
            a = batch_first(a, d)
            a = lax.expand_dims(a, tuple(range(1, 1 + rank - (a.ndim - 1))))
        aligned.append(a)
    return aligned


def sum_to_shape(a, shape):
    """The transpose of broadcasting ``shape`` up to ``a.shape``."""
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and a.shape[lead + i] != 1)
    # lax, not jnp.sum (a jitted function: op.py's debug_nans note).
    return lax.reduce_sum(a, axes).reshape(shape) if axes else a


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
