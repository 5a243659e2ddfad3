"""``silu_grad``: the primitive wrapped so that sharded arrays stay sharded.

Without partitioning information XLA gathers sharded operands before a custom
call. Three layers, outermost first, keep the call per shard and every JAX
transformation working:

1. ``jax.custom_jvp``: tangents in plain jnp (they transpose, batch and shard);
2. ``jax.custom_batching.custom_vmap``: vmap re-enters this stack with batched operands;
3. ``custom_partitioning`` with a Shardy rule: each device binds ``silu_grad_p``
   on its own shard, so the FFI call (and its workspace) is traced per shard.

(``custom_partitioning`` has neither a JVP nor a batching rule of its own,
hence the two outer layers.)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.custom_derivatives import SymbolicZero
from jax.experimental.custom_partitioning import custom_partitioning
from jax.sharding import NamedSharding

from .derivatives import silu_prime, wide_float
from .primitive import align_batched, silu_grad_p, x_tangent
from .sharding_specs import aligned_dims, operand_spec, result_spec, varying_axes

# ------------------------------------------------------- 3. partitioning --

def _sharding_rule(mesh, operand_types, result_types):
    """Einsum-like rule: one factor per result dim; an operand dim broadcast from
    size 1 gets its own factor, which must stay unsharded."""
    (out,) = result_types
    out_shape = tuple(out.shape)
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
    rule = ", ".join(operands) + " -> " + " ".join(factors)
    return rule, {"need_replication_factors": tuple(unsharded)}


def _infer_sharding(mesh, arg_shapes, result_shape):
    return NamedSharding(mesh, result_spec(arg_shapes, result_shape.shape))


def _partition(mesh, arg_shapes, result_shape):
    """Each device runs the primitive on its shard; operands are asked for in
    the layout matching the result's (which the Shardy rule already ensures)."""
    out_shape = result_shape.shape
    result = result_spec(arg_shapes, out_shape)
    arg_shardings = tuple(NamedSharding(mesh, operand_spec(result, a.shape, out_shape)) for a in arg_shapes)
    return mesh, silu_grad_p.bind, NamedSharding(mesh, result), arg_shardings


@custom_partitioning
def _per_shard(grad_output, x):
    return silu_grad_p.bind(grad_output, x)


_per_shard.def_partition(
    partition=_partition,
    infer_sharding_from_operands=_infer_sharding,  # used when Shardy is off
    sharding_rule=_sharding_rule,
)


# ----------------------------------------------------------- 2. batching --

@jax.custom_batching.custom_vmap
def _batched(grad_output, x):
    return _per_shard(grad_output, x)


@_batched.def_vmap
def _batched_rule(axis_size, in_batched, grad_output, x):
    dims = [0 if b else None for b in in_batched]
    return _batched(*align_batched((grad_output, x), dims)), True


# ---------------------------------------------------------- 1. derivatives --

@jax.custom_jvp
def _silu_grad(grad_output, x):
    return _batched(grad_output, x)


def _jvp(primals, tangents):
    grad_output, x = primals
    g_dot, x_dot = tangents
    out = _silu_grad(grad_output, x)
    terms = []
    if not isinstance(g_dot, SymbolicZero):
        terms.append(jnp.broadcast_to((wide_float(g_dot) * silu_prime(x)).astype(out.dtype), out.shape))
    if not isinstance(x_dot, SymbolicZero):
        terms.append(x_tangent(grad_output, x, x_dot, out.shape))
    return out, sum(terms[1:], terms[0]) if terms else jnp.zeros_like(out)


_silu_grad.defjvp(_jvp, symbolic_zeros=True)


@jax.jit  # eager calls then trace the layers above once per shape, not per call
def silu_grad(grad_output, x):
    """SiLU backward: ``grad_output * s'(x)`` through the SiluGrad custom call.

    Works under every JAX transformation; on sharded arrays each device runs the
    call on its own shard (no gathers), also inside ``jax.shard_map``.

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
    return _silu_grad(*_vary_alike(grad_output, x))


def _vary_alike(*operands):
    """Inside shard_map, mark each operand varying over every manual axis any of
    them varies over (as jnp's binary ops do), so the result's type is right
    and its transpose sums the cotangent of an invariant operand."""
    axes = [varying_axes(jax.typeof(a)) for a in operands]
    union = frozenset().union(*axes)
    return [jax.lax.pcast(a, tuple(sorted(union - own)), to="varying") if union - own else a
            for a, own in zip(operands, axes)]


def _is_weak(a) -> bool:
    return bool(getattr(jax.typeof(a), "weak_type", False))
