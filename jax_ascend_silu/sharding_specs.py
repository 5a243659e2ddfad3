"""How silu_grad's result is laid out across devices, from its operands.

Shared by the primitive's abstract evaluation (explicitly sharded meshes carry
shardings in types) and the ``custom_partitioning`` rules (``partitioning.py``).
"""

from __future__ import annotations

from jax.sharding import NamedSharding, PartitionSpec


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
