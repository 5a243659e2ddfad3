"""SiluGrad, defined once: the primitive, its rules, and ``silu_grad``.

    silu_grad(grad_output, x) = grad_output * s'(x),  s(x) = x * sigmoid(x)

with NumPy broadcasting between the two operands.

``silu_grad_p`` is the one operator: abstract evaluation, JVP, transpose and
batching are its rules, and ``silu_grad`` only settles weak types and manual
axes before binding it. Partitioning is part of its lowering: where the
program spans several devices, the rule lowers through ``custom_partitioning``
and each device calls the kernel on its own shard; on one device (or inside
``jax.shard_map``, already per shard) it is one custom call. So the primitive
bound directly, eager or jitted, batched, transposed or sharded, is the whole
operator, and ``silu_grad`` and ``silu_grad_p`` agree bit for bit.

No layer of JAX's ``custom_*`` family wraps it, and its rules are written in
``lax``. JAX evaluates a jaxpr under ``jax.config.debug_nans(False)`` when it
lowers ``custom_vmap`` or a one-device ``custom_partitioning``, differentiates
a ``custom_jvp``, and when it differentiates, batches or partially evaluates
any jitted function (jnp's arithmetic, ``jnp.sum`` and ``jnp.moveaxis`` are
jitted functions). Leaving that context switches the NaN check off for the
rest of the thread in every jitted function that already ran, when the flag
is set process-wide as users set it; JAX alone shows it (jax 0.10.2 to
0.12)::

    jax.config.update("jax_debug_nans", True)
    f = jax.jit(lambda v: v * 2); f(x)
    jax.make_jaxpr(jax.vmap(jnp.sin))(x)      # or jax.jit(custom_vmap_fn)(x)
    f(x_with_nan)                             # returns NaN, no FloatingPointError

A primitive with ``lax`` rules binds nothing of the kind, so the package
changes nothing in the user's program that ``jax.nn.silu`` leaves alone
(tests/test_composition.py compares the two, with the flag set per thread
and process-wide). The multi-device lowering still goes through
``custom_partitioning``, the one public way to partition a custom call
(the matrix's sharded cells show the NaN check kept there).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.interpreters import ad, batching, mlir, xla

from ._ffi import TARGET
from ._op_layer import (
    broadcast_operands,
    broadcast_sharding_rule,
    broadcast_specs,
    check_same_vma,
    devices_marker,
    is_weak,
    partitioned,
    register_custom_call,
    result_aval,
    settle_weak,
    vary_alike,
)
from ._primitive import ModulePrimitive
from .derivatives import silu_second, times_silu_prime, wide_float
from .operands import (
    align_batched,
    describe,
    kernel_operands,
    sum_to_shape,
)


class SiluGradPrimitive(ModulePrimitive):
    """The SiluGrad primitive, ``silu_grad_p``, which is the whole operator.

    Abstract evaluation, JVP, transpose and batching are its rules; its
    lowering is one custom call, or one per shard under
    ``custom_partitioning`` where the program spans several devices. A bind
    without parameters gets the defaults, so users may call
    ``silu_grad_p.bind(grad_output, x)``, on sharded arrays too; it
    differentiates, batches, transposes and shards as ``silu_grad`` does, and
    the two agree bit for bit. Unlike ``silu_grad`` it takes the operands as
    they are: a Python scalar is not cast to the other operand's dtype, and
    ``shard_map`` varying axes are not aligned. It is a
    :class:`jax.extend.core.Primitive`.

    Examples:
      >>> import jax.numpy as jnp
      >>> import numpy as np
      >>> import jax_ascend_silu as jas
      >>> x = jnp.array([-1.0, 0.0, 2.0], jnp.float32)
      >>> g = jnp.ones_like(x)
      >>> np.array_equal(jas.silu_grad_p.bind(g, x), jas.silu_grad(g, x))
      True
    """

    def bind(self, *args, **params):
        params.setdefault("overwrite_grad_output", False)
        if "devices" not in params:
            params["devices"] = devices_marker()
        return super().bind(*args, **params)


silu_grad_p = SiluGradPrimitive(TARGET, __name__, "silu_grad_p")

# ===================================================================== rules ==


def abstract_eval(grad_output, x, *, overwrite_grad_output=False, devices=None):
    """Shape and dtype checks, broadcasting, and the result's sharding."""
    del overwrite_grad_output, devices  # where the result lives and how it is lowered, not what it is
    shape, dtype = broadcast_operands("silu_grad", [("grad_output", grad_output), ("x", x)])
    weak = bool(getattr(grad_output, "weak_type", False) and getattr(x, "weak_type", False))
    check_same_vma("silu_grad", [("grad_output", grad_output), ("x", x)], "jax_ascend_silu.silu_grad aligns them")
    # Built on an operand's aval so manual-axis information survives.
    base = next((a for a in (grad_output, x) if tuple(a.shape) == shape), grad_output)
    return result_aval(base, shape, (grad_output, x), weak=weak, dtype=dtype)


def tangent(grad_output, x, g_dot, x_dot, shape):
    """The JVP rule's tangent, ``None`` for a zero tangent. Linear in
    grad_output: ``s'(x) * g_dot``; in x: ``grad_output * s''(x) * x_dot``, each
    computed in float32 (or wider) and rounded once.

    Written with primitives that lower to ``jax.numpy`` (``silu_tangent_p``,
    ``silu_second_p``), not with the custom call, so that the tangent fuses
    with its neighbours; each primitive is compiled whole when called eagerly,
    and the products around them round alike eager or traced, so an eager JVP
    gives jit's values. Written in ``lax`` (no jitted function, as jnp's
    arithmetic is): differentiating or partially evaluating a jitted function
    enters one of JAX's ``debug_nans(False)`` contexts (module docstring), and
    this rule runs under an outer ``grad`` whenever SiluGrad is differentiated
    twice. The x term's operands are broadcast to ``shape`` and the g term's
    tangent too (its x broadcasts inside ``silu_tangent_p``): the package
    never relies on rank promotion."""
    dtype = x.dtype
    terms = []
    if g_dot is not None:
        # x as it is: a broadcast x stays unmaterialised, also in the custom
        # call that the term transposes to.
        terms.append(silu_tangent_p.bind(jnp.broadcast_to(g_dot, shape), x, overwrite=False))
    if x_dot is not None:
        g, x, x_dot = (jnp.broadcast_to(a, shape) for a in (grad_output, x, x_dot))
        term = lax.mul(lax.mul(wide_float(g), silu_second(x)), wide_float(x_dot))
        terms.append(term.astype(dtype))
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else lax.add(*terms)


# The term s'(x) * t, linear in t, is a primitive of its own: evaluated in
# jax.numpy (``times_silu_prime``: it fuses and shards), transposed to the
# custom call, and differentiated in x by s''(x), never through its
# error-compensated arithmetic. ``silu``'s tangent is this term.
silu_tangent_p = ModulePrimitive("jax_ascend_silu_silu_tangent", __name__, "silu_tangent_p")


def _tangent_in_jnp(t, x, *, overwrite):
    del overwrite  # how the transpose stores its result
    # Broadcast inside the lowering (XLA fuses it), never by rank promotion.
    return times_silu_prime(t, jnp.broadcast_to(x, np.broadcast_shapes(t.shape, x.shape))).astype(x.dtype)


def _tangent_transpose(ct, t, x, *, overwrite):
    if ad.is_undefined_primal(x):
        raise ValueError("silu, silu_grad: the tangent s'(x) * t is linear in t only; it cannot be transposed in x")
    if type(ct) is ad.Zero:
        return ad.Zero(t.aval), None
    # The backward pass proper: s'(x) * ct through the custom call, written
    # over ct where the caller knows it is dead.
    return sum_to_shape(bind_silu_grad(ct, x, overwrite_grad_output=overwrite), t.aval.shape), None


def _tangent_x_term(x_dot, t, x, *, overwrite):
    """d/dx of s'(x) * t along x_dot: t * s''(x) * x_dot (SiluGrad's JVP term in x)."""
    return tangent(t, x, None, x_dot, np.broadcast_shapes(t.shape, x.shape))


# Shapes broadcast as SiluGrad's do (t, x in grad_output's and x's places).
silu_tangent_p.def_abstract_eval(lambda t, x, *, overwrite: abstract_eval(t, x))
silu_tangent_p.def_impl(functools.partial(xla.apply_primitive, silu_tangent_p))
mlir.register_lowering(silu_tangent_p, mlir.lower_fun(_tangent_in_jnp, multiple_results=False))
ad.primitive_transposes[silu_tangent_p] = _tangent_transpose
batching.primitive_batchers[silu_tangent_p] = lambda args, dims, *, overwrite: (
    batch(functools.partial(silu_tangent_p.bind, overwrite=overwrite), args, dims), 0)
ad.defjvp(silu_tangent_p, lambda t_dot, t, x, *, overwrite: silu_tangent_p.bind(t_dot, x, overwrite=overwrite),
          _tangent_x_term)


def transpose(ct, grad_output, x, **params):
    """Linear in grad_output: its cotangent is silu_grad(ct, x), summed over broadcast dims."""
    if ad.is_undefined_primal(x):
        raise ValueError("silu_grad is linear in grad_output only; it cannot be transposed in x")
    aval = grad_output.aval
    if type(ct) is ad.Zero:
        return ad.Zero(aval), None
    return sum_to_shape(silu_grad_p.bind(ct, x, **params), aval.shape), None


def batch(call, args, dims):
    """vmap: one broadcasting call with the batch dimension first."""
    return call(*align_batched(args, dims))


# ================================================================= primitive ==


def _kernel_call(grad_output, x, *, overwrite_grad_output):
    """The custom call, one result. With ``overwrite_grad_output`` the result
    is written over grad_output when it has the result's shape (the kernels
    read each element before writing it). That is free only when
    grad_output's buffer is dead afterwards (a backward pass's incoming
    cotangent, a donated argument); otherwise XLA copies grad_output first,
    so the public ``silu_grad`` asks for a fresh result.

    Up to rank 8 the kernel gets the user's shapes; past it ``kernel_operands``
    merges dimensions, so any rank stays above the lowering: abstract
    evaluation and the sharding rules read the user's shapes."""
    shape, dtype = broadcast_operands("silu_grad", [("grad_output", grad_output), ("x", x)])
    alias = overwrite_grad_output and tuple(grad_output.shape) == shape
    (g, v), merged = kernel_operands((grad_output, x), shape)
    out = jax.ffi.ffi_call(TARGET, jax.ShapeDtypeStruct(merged, dtype),
                           input_output_aliases={0: 0} if alias else None)(g, v)
    return out.reshape(shape)


@functools.cache
def _per_shard(arity: int, overwrite_grad_output: bool):
    """silu_grad_p under ``custom_partitioning``: each device binds it on its
    own shard (as one call: ``devices=None``), broadcasting as the rules above."""
    del arity  # always two operands

    def bind_local(grad_output, x):
        return silu_grad_p.bind(grad_output, x, overwrite_grad_output=overwrite_grad_output, devices=None)

    return partitioned(bind_local, broadcast_specs, broadcast_sharding_rule)


def _primitive_jvp(primals, tangents, **params):
    grad_output, x = primals
    g_dot, x_dot = (None if type(t) is ad.Zero else t for t in tangents)
    out = silu_grad_p.bind(grad_output, x, **params)
    # JAX calls a JVP rule with at least one nonzero tangent: the tangent is not None.
    return out, tangent(grad_output, x, g_dot, x_dot, out.shape)


silu_grad_p.def_abstract_eval(abstract_eval)
register_custom_call(silu_grad_p, "SiluGrad", _kernel_call, _per_shard, overwrite="overwrite_grad_output")
# Eager calls compile the primitive alone (once per shape, dtype and
# parameters) and run it, as JAX's own primitives do: the values are jit's,
# also under jax.disable_jit(), and jax_debug_nans names the primitive.
silu_grad_p.def_impl(functools.partial(xla.apply_primitive, silu_grad_p))
batching.primitive_batchers[silu_grad_p] = lambda args, dims, **params: (
    batch(functools.partial(silu_grad_p.bind, **params), args, dims), 0)
ad.primitive_jvps[silu_grad_p] = _primitive_jvp
ad.primitive_transposes[silu_grad_p] = transpose


# ================================================================ silu_grad ==


def bind_silu_grad(grad_output, x, *, overwrite_grad_output=False):
    """silu_grad_p on two operands of any kind: a weakly typed operand (a
    Python float) takes the other's dtype, and inside ``jax.shard_map`` both
    are made to vary over the same manual axes."""
    grad_output, x = jnp.asarray(grad_output), jnp.asarray(x)
    for name, a in (("grad_output", grad_output), ("x", x)):
        if is_weak(a) and not jnp.issubdtype(a.dtype, jnp.floating):
            # Casting would drop an imaginary part or pass an integer off as a float.
            raise TypeError(
                f"silu_grad: {name} is a Python {_PYTHON_KIND.get(a.dtype.kind, a.dtype.name)} "
                f"({describe(a)}); pass a float (e.g. 1.0) or a float32, float16 or bfloat16 array")
    grad_output, x = vary_alike(*settle_weak([grad_output, x]))
    return silu_grad_p.bind(grad_output, x, overwrite_grad_output=overwrite_grad_output)


_PYTHON_KIND = {"c": "complex", "i": "int", "u": "int", "b": "bool"}


def silu_grad(grad_output, x, *, overwrite_grad_output=False):
    """SiLU backward: ``grad_output * s'(x)`` through the SiluGrad custom call.

    Works under every JAX transformation (jit, vmap, grad, jvp, linearize,
    linear_transpose, checkpoint, scan, shard_map, pmap, export); on sharded
    arrays each device runs the call on its own shard (no gathers), also
    inside ``jax.shard_map``.

    Args:
      grad_output: cotangent of ``silu(x)``; float32, float16 or bfloat16.
      x: the forward input, same dtype; the two broadcast (NumPy rules).
        A weakly typed operand (a Python scalar) takes the other's dtype.
      overwrite_grad_output: write the result over ``grad_output`` (when it has
        the result's shape). Free, and saving a buffer, only when grad_output
        is dead after the call: a donated argument
        (``jax.jit(..., donate_argnums=0)``) or a temporary. On a live
        grad_output XLA copies it first, so the default is a fresh result.

    Returns:
      An array of the broadcast shape and the common dtype.

    Raises:
      TypeError: unsupported or differing dtypes, a complex, integer or
        boolean Python scalar, or ``overwrite_grad_output`` not a bool.
      ValueError: shapes that do not broadcast.

    Examples:
      >>> import jax.numpy as jnp
      >>> import jax_ascend_silu as jas
      >>> x = jnp.array([-1.0, 0.0, 2.0], jnp.float32)
      >>> g = jas.silu_grad(jnp.ones((2, 1), jnp.float32), x)  # broadcasts to (2, 3)
      >>> g.shape
      (2, 3)
      >>> [round(v, 4) for v in g[0].tolist()]
      [0.0723, 0.5, 1.0908]
    """
    if not isinstance(overwrite_grad_output, (bool, np.bool_)):
        raise TypeError(
            f"silu_grad: overwrite_grad_output must be True or False, got "
            f"{type(overwrite_grad_output).__name__} {overwrite_grad_output!r}")
    return bind_silu_grad(grad_output, x, overwrite_grad_output=bool(overwrite_grad_output))


#: silu_grad over a grad_output the caller donates: the result reuses its buffer.
silu_grad_overwriting = functools.partial(silu_grad, overwrite_grad_output=True)
