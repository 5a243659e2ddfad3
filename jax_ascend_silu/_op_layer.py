"""What every custom-call operation of the package shares: the op layer.

An operation (SiluGrad in ``op.py``, SwiGluGrad in ``swiglu.py``) is a
primitive with its own rules (abstract evaluation, JVP, transpose, batching)
and its own custom call (``kernel_call``: operands in, results out, for one
device). This module holds the rest, once:

- the operands: checks of dtype, shape and ``shard_map`` varying axes that
  name the function called in their messages; weak types settled and varying
  axes aligned before a bind;
- the devices: the ``devices`` parameter a bind carries (``devices_marker``)
  and whether a lowering spans several devices (``spans_devices``);
- the lowering over the backend table (``register_custom_call``): one custom
  call, or one per shard under ``custom_partitioning`` (``partitioned``,
  for any number of results) where the program spans several devices; a
  backend without the operation refuses it, saying where it runs;
- rank merging past the kernel's rank limit (``merge_around``; the
  broadcasting merge is ``operands.kernel_operands``);
- the packed layout ``x = [A | B]`` of gated operations: its halves, its
  checks and its sharding.

Shapes, specs and the dtype table are ``operands.py``'s.
"""

from __future__ import annotations

import functools
import math
import operator

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental.custom_partitioning import custom_partitioning
from jax.interpreters import ad, mlir
from jax.sharding import NamedSharding, PartitionSpec

from ._ffi import BACKENDS, Backend
from .operands import (
    DTYPES,
    MAX_RANK,
    aligned_dims,
    batch_first,
    describe,
    kernel_takes,
    operand_spec,
    result_spec,
    spec_of,
    varying_axes,
)

# ================================================================ operands ==


def check_float(fn: str, name: str, aval) -> None:
    """A floating-point operand (integers, booleans and complex raise)."""
    if not jnp.issubdtype(aval.dtype, jnp.floating):
        raise TypeError(
            f"{fn}: {name} has dtype {np.dtype(aval.dtype).name} ({describe(aval)}); {fn} takes floating-point "
            f"arrays: {', '.join(DTYPES)} through the kernel (float64 runs jax.numpy). "
            f"Cast {name}, e.g. {name}.astype(jnp.float32).")


def check_kernel_dtypes(fn: str, named) -> None:
    """For the primitives: every operand of a dtype the kernel takes, all one dtype."""
    for name, aval in named:
        check_float(fn, name, aval)
        if not kernel_takes(aval):
            raise TypeError(f"{fn}: {name} has dtype {np.dtype(aval.dtype).name} ({describe(aval)}); the primitive "
                            f"takes {', '.join(DTYPES)} (the public functions run float64 in jax.numpy)")
    check_same_dtype(fn, named)


def check_same_dtype(fn: str, named) -> None:
    """``named``: (name, aval) pairs, all of the first one's dtype."""
    (first, a), *rest = named
    for name, b in rest:
        if np.dtype(a.dtype) != np.dtype(b.dtype):
            raise TypeError(f"{fn}: {first} ({describe(a)}) and {name} ({describe(b)}) must have the same dtype; "
                            f"cast one, e.g. {name}.astype({first}.dtype)")


def check_same_shape(fn: str, named, remedy: str) -> None:
    """All of the first one's shape; ``remedy`` says what the caller does instead."""
    (first, a), *rest = named
    for name, b in rest:
        if tuple(a.shape) != tuple(b.shape):
            raise ValueError(f"{fn}: {first} ({describe(a)}) and {name} ({describe(b)}) must have one shape; "
                             f"{remedy}")


def check_same_vma(fn: str, named, remedy: str) -> None:
    """Inside ``shard_map``: all varying over the first one's manual axes."""
    (first, a), *rest = named
    for name, b in rest:
        if varying_axes(a) != varying_axes(b):
            raise ValueError(
                f"{fn}: inside shard_map {first} ({describe(a)}) varies over mesh axes {sorted(varying_axes(a))} "
                f"but {name} ({describe(b)}) over {sorted(varying_axes(b))}; {remedy} "
                "(or use jax.lax.pcast(..., to='varying'))")


def broadcast_shape(fn: str, named) -> tuple:
    """The shape ``named``'s operands broadcast to (NumPy rules), or a clear error.
    jnp's broadcasting, not NumPy's: it takes symbolic dimensions (jax.export)."""
    try:
        return tuple(jnp.broadcast_shapes(*(tuple(a.shape) for _, a in named)))
    except (ValueError, TypeError):
        listed = " and ".join(f"{name} ({describe(a)})" for name, a in named)
        raise ValueError(f"{fn}: shapes of {listed} do not broadcast (NumPy rules)") from None


def broadcast_operands(fn: str, named) -> tuple[tuple, np.dtype]:
    """The result shape and dtype of an elementwise call on ``named``'s
    operands, which broadcast (NumPy rules) and share one dtype the kernel
    takes; or a clear error. Raised at trace time, before anything reaches XLA."""
    for name, aval in named:
        if not kernel_takes(aval):
            raise TypeError(f"{fn}: {name} has dtype {np.dtype(aval.dtype).name} (shape {tuple(aval.shape)}); "
                            f"supported dtypes are {', '.join(DTYPES)}")
    check_same_dtype(fn, named)
    return broadcast_shape(fn, named), np.dtype(named[0][1].dtype)


def broadcast_all(fn: str, named):
    """(shape, arrays): ``named``'s arrays broadcast to their one shape, or a clear error."""
    shape = broadcast_shape(fn, named)
    return shape, [jnp.broadcast_to(a, shape) for _, a in named]


def broadcasts_to(a, shape) -> bool:
    """Whether ``a`` broadcasts to ``shape`` exactly."""
    try:
        return tuple(jnp.broadcast_shapes(tuple(a.shape), shape)) == tuple(shape)
    except (ValueError, TypeError):
        return False


def is_weak(a) -> bool:
    return bool(getattr(jax.typeof(a), "weak_type", False))


def settle_weak(arrays):
    """Each weakly typed array (a Python scalar) in the dtype of the first
    strongly typed one, as jnp's binary operations do."""
    strong = [a for a in arrays if not is_weak(a)]
    if not strong:
        return list(arrays)
    return [a.astype(strong[0].dtype) if is_weak(a) else a for a in arrays]


def vary_alike(*operands):
    """Inside shard_map, mark each operand varying over every manual axis any of
    them varies over (as jnp's binary ops do), so the result's type is right
    and its transpose sums the cotangent of an invariant operand."""
    axes = [varying_axes(jax.typeof(a)) for a in operands]
    union = frozenset().union(*axes)
    return [jax.lax.pcast(a, tuple(sorted(union - own)), to="varying") if union - own else a
            for a, own in zip(operands, axes)]


def float_operands(fn: str, named):
    """Arrays of one floating dtype, aligned over shard_map's manual axes: a
    weakly typed operand (a Python float) takes the others' dtype."""
    names = [name for name, _ in named]
    arrays = [jnp.asarray(v) for _, v in named]
    for name, a in zip(names, arrays):
        check_float(fn, name, jax.typeof(a))
    arrays = settle_weak(arrays)
    check_same_dtype(fn, [(name, jax.typeof(a)) for name, a in zip(names, arrays)])
    return vary_alike(*arrays)


def result_aval(base, shape, spec_source, weak=False, dtype=None):
    """``base`` updated to ``shape`` (manual-axis information kept), with the
    sharding broadcasting implies from ``spec_source`` (explicit meshes carry it)."""
    spec = result_spec(spec_source, shape)
    return base.update(shape=shape, dtype=base.dtype if dtype is None else dtype, weak_type=weak,
                       sharding=base.sharding.update(spec=spec))


def instantiate(tangents):
    return [ad.instantiate_zeros(t) for t in tangents]


def is_zero(t) -> bool:
    return type(t) is ad.Zero


def batch_first_rule(prim, axis_param: str):
    """vmap of a primitive whose operands have one shape: the batch dimension
    first in every operand (an unbatched one broadcast), the primitive's axis
    parameter ``axis_param`` (None: no axis) moved by one."""

    def rule(args, dims, **params):
        size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
        args = [batch_first(a, d) if d is not None else lax.broadcast(a, (size,)) for a, d in zip(args, dims)]
        if params[axis_param] is not None:
            params[axis_param] += 1
        out = prim.bind(*args, **params)
        return out, ([0] * len(out) if prim.multiple_results else 0)

    return rule


def normalise_axis(fn: str, axis, aval, scalar: str = "") -> int:
    """``axis`` as a non-negative dimension of x's ``aval``, or a clear error
    (``scalar``: why x needs a dimension, for a scalar x)."""
    try:
        k = operator.index(axis)
    except TypeError:
        raise TypeError(f"{fn}: axis must be an int, got {type(axis).__name__} {axis!r}") from None
    rank = len(aval.shape)
    if rank == 0 and scalar:
        raise ValueError(f"{fn}: x ({describe(aval)}) is a scalar; {scalar}")
    if not -rank <= k < rank:
        raise ValueError(f"{fn}: axis {k} is out of range for x ({describe(aval)}) of rank {rank}; "
                         f"pass an axis in [{-rank}, {rank - 1}] (the default -1 is the last)")
    return k % rank


def is_static(d) -> bool:
    return isinstance(d, (int, np.integer))


def is_empty(shape) -> bool:
    """Statically empty (a symbolic dimension never is)."""
    return all(is_static(d) for d in shape) and math.prod(shape) == 0


def merge_around(a, axis: int | None):
    """``a`` of rank above ``MAX_RANK`` reshaped for the kernel: to (before,
    axis, after) keeping ``axis`` its own dimension, or flat (``axis`` None);
    as it is up to ``MAX_RANK``. Free: the elements keep their order."""
    shape = tuple(a.shape)
    if len(shape) <= MAX_RANK:
        return a
    if axis is None:
        return a.reshape(math.prod(shape))
    return a.reshape(math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:]))


# ========================================================== packed layout ==
# x = [A | B], two halves along an axis (CANN's gated activations): split,
# checked and sharded alike for every operation that takes it.


def halves(x, axis: int):
    """(A, B): the halves of ``x`` along ``axis``, by ``lax.split``, whose
    transpose concatenates (two slices would transpose to pads, whose zero
    is moved to the device eagerly, refused under ``jax.transfer_guard``)."""
    n = x.shape[axis] // 2
    a, b = lax.split(x, (n, n), axis=axis)
    return a, b


def check_packed(fn: str, aval, axis: int, pair: str, name: str = "x") -> tuple:
    """The shape of one half of the packed ``aval`` along ``axis``; raises
    for an odd size there, and for a split axis sharded over mesh axes in the
    array's type (explicit sharding; auto sharding is checked when the call
    is partitioned, ``packed_specs``). ``pair``: the function taking the
    halves apart, which the messages offer."""
    shape = tuple(aval.shape)
    n = shape[axis]
    if is_static(n) and n % 2:
        raise ValueError(f"{fn}: {name} ({describe(aval)}) has odd size {n} along axis {axis}; the packed form "
                         f"is [A | B], two halves of one size along the axis: pad or trim {name} to an even size, "
                         f"or pass gate and up apart to {pair}")
    entry = spec_of(aval.sharding, len(shape))[axis]
    if entry is not None:
        raise split_axis_sharded(fn, name, aval, axis, entry, pair)
    return (*shape[:axis], n // 2, *shape[axis + 1:])


def split_axis_sharded(fn: str, name: str, aval, axis: int, entry, pair: str) -> ValueError:
    return ValueError(
        f"{fn}: the split axis {axis} of {name} ({describe(aval)}) is sharded over mesh axes {entry!r}, so the "
        "halves A and B lie on different devices; the package does not gather them. Shard another axis and keep "
        f"axis {axis} whole (None at position {axis} of the PartitionSpec), or inside jax.shard_map split each "
        f"shard on its own (Megatron's per-shard [A | B] layout), or pass gate and up apart to {pair}.")


def without(spec, axis) -> PartitionSpec:
    return PartitionSpec(*(None if i == axis else s for i, s in enumerate(spec)))


def packed_specs(fn: str, pair: str, axis, arg_shapes, result_shape):
    """(result spec, operand specs) of a packed per-shard call (grad_output, x):
    elementwise in every dimension but the split axis, which must not be
    sharded in x (raises: its halves would be gathered); grad_output's is
    asked for whole."""
    g, x = arg_shapes
    entry = spec_of(x.sharding, len(x.shape))[axis]
    if entry is not None:
        raise split_axis_sharded(fn, "x", x, axis, entry, pair)
    shape = tuple(x.shape)
    spec = without(result_spec(arg_shapes, shape), axis)
    return spec, [operand_spec(spec, g.shape, shape), spec]


def packed_sharding_rule(axis, mesh, operand_types, result_types):
    """Shardy rule of the packed form: one factor per dimension of x. The
    grad_output's split axis (half x's size) is a factor of its own, kept
    whole: each shard's call reads grad_output's whole axis against both
    halves of x. x's split axis is not replicated, which would gather x's
    halves: sharded, it raises (``packed_specs``)."""
    x = operand_types[-1]
    factors = [f"d{j}" for j in range(len(x.shape))]
    full = " ".join(factors)
    half = " ".join("h" if j == axis else f for j, f in enumerate(factors))
    return f"{half}, {full} -> {full}", {"need_replication_factors": ("h",)}



# ================================================================= devices ==


def devices_marker():
    """The ``devices`` parameter of a bind: ``None`` in a process with one
    device; elsewhere ``_PARTITIONED_MARKER``, a closed jaxpr holding one
    ``custom_partitioning`` equation. JAX hands a lowering rule the program's
    devices only when the program contains an equation that needs them
    (sub-jaxprs in parameters count), and partitioning a call needs them."""
    return _PARTITIONED_MARKER if _several_devices() else None


def _several_devices() -> bool:
    """More than one device on the default backend, or on the CPU where an
    accelerator is the default (a mesh of CPU devices next to one GPU)."""
    if jax.device_count() > 1:
        return True
    try:
        return len(jax.devices("cpu")) > 1
    except RuntimeError:  # JAX_PLATFORMS without cpu
        return False


def spans_devices(axis_context) -> bool:
    """Whether a program lowered in ``axis_context`` is partitioned across
    devices by XLA, so that the custom call must say how it partitions. Inside
    ``jax.shard_map`` with every mesh axis manual the program is already one
    shard; an unknown context is taken as one device (the call is then
    correct, XLA gathering its operands at worst)."""
    mesh = getattr(axis_context, "mesh", None)
    if mesh is not None:
        return set(getattr(axis_context, "manual_axes", ())) != set(mesh.axis_names)
    return (getattr(axis_context, "num_devices", 1) > 1
            and getattr(axis_context, "device_assignment", None) is not None)


# ============================================================ partitioning ==


def broadcast_specs(arg_shapes, result_shape):
    """(result spec, operand specs) of an elementwise call whose operands
    broadcast to the results' one shape: the result's from the operands'
    (``result_spec``), broadcast operand dims replicated."""
    out_shape = tuple(jax.tree.leaves(result_shape)[0].shape)
    spec = result_spec(arg_shapes, out_shape)
    return spec, [operand_spec(spec, a.shape, out_shape) for a in arg_shapes]


def broadcast_sharding_rule(mesh, operand_types, result_types):
    """Shardy rule of an elementwise call, einsum-like: one factor per result
    dim, shared by every result; an operand dim broadcast from size 1 gets its
    own factor, which must stay unsharded."""
    out_shape = tuple(result_types[0].shape)
    factors = [f"d{j}" for j in range(len(out_shape))]
    operands, unsharded = [], []
    for k, t in enumerate(operand_types):
        names = []
        for i, j in aligned_dims(tuple(t.shape), len(out_shape)):
            if t.shape[i] == out_shape[j]:
                names.append(factors[j])
            else:
                names.append(f"b{k}_{i}")
                unsharded.append(names[-1])
        operands.append(" ".join(names))
    rule = ", ".join(operands) + " -> " + ", ".join([" ".join(factors)] * len(result_types))
    return rule, {"need_replication_factors": tuple(unsharded)}


def _shardings(specs, mesh, arg_shapes, result_shape):
    """(results' shardings, in ``result_shape``'s structure, operands' shardings)."""
    spec, operand_specs = specs(arg_shapes, result_shape)
    leaves, tree = jax.tree.flatten(result_shape)
    results = jax.tree.unflatten(tree, [NamedSharding(mesh, spec) for _ in leaves])
    return results, tuple(NamedSharding(mesh, s) for s in operand_specs)


def _partition(bind_local, specs, mesh, arg_shapes, result_shape):
    results, operands = _shardings(specs, mesh, arg_shapes, result_shape)
    return mesh, bind_local, results, operands


def _infer_sharding(specs, mesh, arg_shapes, result_shape):
    """The results' shardings from the operands' (used when Shardy is off)."""
    return _shardings(specs, mesh, arg_shapes, result_shape)[0]


def partitioned(bind_local, specs, sharding_rule):
    """``bind_local`` (the primitive bound as one call, ``devices=None``) under
    ``custom_partitioning``: each device runs it on its own shard, with no
    collective. ``specs(arg_shapes, result_shape)`` gives (result spec, operand
    specs), one spec for every result; ``sharding_rule`` is the Shardy rule,
    which asks the operands for the same layouts."""
    per_shard = custom_partitioning(bind_local)
    per_shard.def_partition(
        partition=functools.partial(_partition, bind_local, specs),
        infer_sharding_from_operands=functools.partial(_infer_sharding, specs),
        sharding_rule=sharding_rule,
    )
    return per_shard


# ================================================================ lowering ==


def register_custom_call(prim, operation: str, kernel_call, per_shard, *, overwrite: str):
    """Lowers ``prim`` on every backend of the table (``_ffi.BACKENDS``).

    On a backend with ``operation``: ``kernel_call(*operands, **params)``, the
    custom call on one device, or, where the program spans several devices
    and the bind carries the ``devices`` marker, ``per_shard(n_operands,
    **params)`` (a ``partitioned`` function). Parameter ``overwrite`` (its
    name) may ask for results written over dead inputs; it is cleared on a
    backend whose handler must not (``Backend.in_place``). The handler runs
    phase 1 itself, at run time, and takes any workspace from its platform's
    allocator: an XLA-owned workspace would need phase 1 at trace time, where
    Ascend's size (known only to CANN at run time) cannot be had.

    On a backend without it: a lowering that raises, naming the operation and
    where it runs."""
    results = prim.multiple_results
    one_call = mlir.lower_fun(kernel_call, multiple_results=results)

    def rule(in_place, ctx, *operands, devices, **params):
        params[overwrite] = params[overwrite] and in_place
        if devices is not None and spans_devices(ctx.module_context.axis_context):
            return mlir.lower_fun(per_shard(len(operands), **params), multiple_results=results)(ctx, *operands)
        return one_call(ctx, *operands, **params)

    for backend in BACKENDS:
        if operation in backend.operations:
            lowering = functools.partial(rule, operation in backend.in_place)
        else:
            lowering = functools.partial(_refuse, operation, backend)
        mlir.register_lowering(prim, lowering, platform=backend.lowering_platform)


def _refuse(operation: str, backend: Backend, ctx, *operands, **params):
    has = [b.name for b in BACKENDS if operation in b.operations]
    raise NotImplementedError(
        f"jax_ascend_silu: the {backend.name} backend has no {operation} handler; {operation} runs on "
        f"{', '.join(has)}: jax.device_put its operands on one of those (jax_ascend_silu.backends() says which "
        "this installation has)")


def _identity(a):
    return a


_SCALAR = jax.ShapeDtypeStruct((), jnp.float32)
_PARTITIONED_MARKER = jax.make_jaxpr(
    partitioned(_identity, broadcast_specs, broadcast_sharding_rule))(_SCALAR)
