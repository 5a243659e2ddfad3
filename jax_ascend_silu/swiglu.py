"""SwiGLU, ``silu(a) * b``, with its backward pass through one custom call.

Two layouts, as models write them:

- packed, CANN's ``aclnnSwiGlu`` (and ``torch_npu.npu_swiglu``): ``x = [A | B]``,
  halves along ``axis``; ``swiglu(x, axis)`` is ``silu(A) * B``;
- two operands, as Llama-style MLPs compute the gate and the up projection:
  ``silu_mul(gate, up)`` is ``silu(gate) * up`` (NumPy broadcasting).

The design is ``silu``'s (``activation.py``, ``op.py``), three primitives:

- ``swiglu_p``, the forward value, lowered to ``jax.numpy`` (computed in float32
  and rounded once; XLA fuses it, no custom call);
- ``swiglu_tangent_p``, its JVP, ``b * s'(a) * a_dot + silu(a) * b_dot``, linear in
  the tangents and lowered to ``jax.numpy`` (forward mode);
- ``swiglu_grad_p``, the transpose of the tangent: CANN's ``aclnnSwiGluGrad``,
  ``dA = g * B * s'(A)``, ``dB = g * silu(A)``, one custom call
  (``jax_ascend_silu_swiglu_grad``) per SwiGLU in the backward pass. The
  tangent's transpose is the call, and the call's transpose is the tangent,
  so the backward pass keeps only the inputs (a, b or x) as residuals and
  recomputes silu(a) inside the call.

Each primitive has both forms, told apart by the number of operands:
``swiglu_grad_p.bind(grad_output, x, axis=k)`` -> ``[dx]`` (packed) and
``swiglu_grad_p.bind(grad_output, a, b)`` -> ``[da, db]`` (pair, one shape).
Derivatives of every order are defined, in ``lax`` (s'' from
``derivatives.py``), the terms linear in grad_output through the call again.

Sharded arrays: the call lowers through ``custom_partitioning`` per shard, as
silu_grad's does, with no collective. The packed form's split axis must not be
sharded (the halves would lie on different devices): that raises a
``ValueError`` rather than gathering; inside ``jax.shard_map`` each shard is
split on its own (Megatron's per-shard layout, the user's choice).

Empty arrays (CANN's gradient rejects them) give empty results without a
call. float64 (``jax_enable_x64``) runs the same formulas in ``jax.numpy``.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.interpreters import ad, batching, mlir, xla

from ._ffi import SWIGLU_TARGET
from ._op_layer import (
    batch_first_rule,
    broadcast_all,
    broadcast_sharding_rule,
    broadcast_specs,
    broadcasts_to,
    check_float,
    check_kernel_dtypes,
    check_packed,
    check_same_dtype,
    check_same_shape,
    check_same_vma,
    devices_marker,
    float_operands,
    halves,
    instantiate,
    is_empty,
    is_zero,
    merge_around,
    normalise_axis,
    packed_sharding_rule,
    packed_specs,
    partitioned,
    register_custom_call,
    result_aval,
    vary_alike,
    without,
)
from ._primitive import ModulePrimitive
from .derivatives import swiglu_grads, swiglu_tangent, swiglu_value, times_silu_second
from .op import silu_tangent_p
from .operands import (
    describe,
    kernel_takes,
    result_spec,
    spec_of,
    sum_to_shape,
)

# ================================================================ operands ==


def _packed(axis) -> bool:
    """Whether a bind is of the packed form (its ``axis`` an int; None for the pair form)."""
    return axis is not None


def _split(parts, axis):
    """(a, b) of a packed operand, or the pair as it is."""
    return halves(parts[0], axis) if _packed(axis) else tuple(parts)


# What the pair form's callers do instead of passing operands of one shape, or one vma.
_BROADCAST_FIRST = "the public functions (silu_mul, silu_mul_grad) broadcast them first"
_ALIGN = "the public functions align them"


def _normalise_axis(fn: str, axis, aval) -> int:
    """``axis`` as a non-negative dimension of the packed ``aval``, or a clear error."""
    return normalise_axis(fn, axis, aval, scalar="the packed form splits x into halves along an axis, so x needs "
                                                  "at least one dimension (silu_mul(gate, up) takes scalars)")


# ============================================================== primitives ==


class SwiGluPrimitive(ModulePrimitive):
    """A SwiGLU primitive with a packed and a pair form, told apart by the
    number of operands (``packed_arity`` for the packed one). A bind sets the
    defaults: the packed form's ``axis`` is normalised non-negative (-1 when
    not given), the pair form's ``axis`` is None, and a primitive that
    partitions gets the ``devices`` marker as ``silu_grad_p`` does."""

    def __init__(self, name: str, attribute: str, packed_arity: int, partitioned: bool = False):
        super().__init__(name, __name__, attribute)
        self._packed_arity = packed_arity
        self._partitioned = partitioned
        self._public = attribute

    def bind(self, *args, **params):
        if len(args) == self._packed_arity:
            x = jax.typeof(args[-1])
            params["axis"] = _normalise_axis(self._public, params.get("axis", -1), x)
        elif params.setdefault("axis", None) is not None:
            raise TypeError(f"{self._public}: axis={params['axis']!r} is for the packed form; the pair form "
                            "(a and b apart) has no axis to split")
        if self._partitioned and "devices" not in params:
            params["devices"] = devices_marker()
        return super().bind(*args, **params)


class SwiGluGradPrimitive(SwiGluPrimitive):
    """The SwiGluGrad primitive, ``swiglu_grad_p``, which is ``aclnnSwiGluGrad`` of CANN.

    Packed: ``swiglu_grad_p.bind(grad_output, x, axis=k)`` returns ``[dx]``, x's
    shape, ``dx = [dA | dB]`` along ``k`` (-1 when not given); grad_output is
    x with that axis halved. Pair: ``swiglu_grad_p.bind(grad_output, a, b)``
    returns ``[da, db]``, all of one shape. ``dA = g * B * s'(A)``,
    ``dB = g * silu(A)``, computed in float32 and rounded once.

    Abstract evaluation, JVP, transpose and batching are its rules; its
    lowering is one custom call, or one per shard under
    ``custom_partitioning`` where the program spans several devices, as
    ``silu_grad_p``'s. Unlike ``swiglu_grad`` it takes the operands as they
    are: no dtype casts, no broadcasting, no ``shard_map`` alignment.

    Examples:
      >>> import jax.numpy as jnp
      >>> import numpy as np
      >>> import jax_ascend_silu as jas
      >>> x = jnp.array([1.0, -2.0, 3.0, 4.0], jnp.float32)  # A = [1, -2], B = [3, 4]
      >>> g = jnp.ones(2, jnp.float32)
      >>> (dx,) = jas.swiglu_grad_p.bind(g, x)  # packed, axis -1
      >>> np.array_equal(dx, jas.swiglu_grad(g, x))
      True
      >>> da, db = jas.swiglu_grad_p.bind(g, x[:2], x[2:])  # pair
      >>> np.array_equal(jnp.concatenate([da, db]), dx)
      True
    """

    def bind(self, *args, **params):
        params.setdefault("overwrite", False)
        return super().bind(*args, **params)


swiglu_p = SwiGluPrimitive("jax_ascend_silu_swiglu", "swiglu_p", packed_arity=1)
swiglu_tangent_p = SwiGluPrimitive("jax_ascend_silu_swiglu_tangent", "swiglu_tangent_p", packed_arity=2)
swiglu_grad_p = SwiGluGradPrimitive("jax_ascend_silu_swiglu_grad", "swiglu_grad_p", packed_arity=2,
                                    partitioned=True)
swiglu_grad_p.multiple_results = True

# ---------------------------------------------------------- abstract eval --


def _forward_aval(fn: str, operands, axis):
    """The forward value's aval: x with ``axis`` halved, or a's (pair form)."""
    if _packed(axis):
        (x,) = operands
        check_kernel_dtypes(fn, [("x", x)])
        return x.update(shape=check_packed(fn, x, axis, "silu_mul"), weak_type=False,
                        sharding=x.sharding.update(spec=without(spec_of(x.sharding, x.ndim), axis)))
    a, b = operands
    named = [("a", a), ("b", b)]
    check_kernel_dtypes(fn, named)
    check_same_shape(fn, named, _BROADCAST_FIRST)
    check_same_vma(fn, named, _ALIGN)
    return result_aval(a, tuple(a.shape), operands, weak=bool(a.weak_type and b.weak_type))


def _tangent_abstract_eval(*operands, axis):
    n = 1 if _packed(axis) else 2
    tangents, primals = operands[:n], operands[n:]
    out = _forward_aval("swiglu_tangent_p", primals, axis)
    names = ("x",) if n == 1 else ("a", "b")
    for name, t, p in zip(names, tangents, primals):
        named = [(name, p), (f"{name}'s tangent", t)]
        check_same_dtype("swiglu_tangent_p", named)
        check_same_shape("swiglu_tangent_p", named, _BROADCAST_FIRST)
    return out


def _grad_abstract_eval(grad_output, *operands, axis, devices, overwrite):
    del devices, overwrite  # how it is lowered and where its results are written, not what they are
    fn = "swiglu_grad_p"
    out = _forward_aval(fn, operands, axis)  # the forward value's aval: grad_output's expected one
    names = ("x",) if _packed(axis) else ("a", "b")
    named = [("grad_output", grad_output), *zip(names, operands)]
    check_kernel_dtypes(fn, named)
    if tuple(grad_output.shape) != tuple(out.shape):
        expected = f"x's shape with axis {axis} halved" if _packed(axis) else "a's and b's shape"
        raise ValueError(f"{fn}: grad_output ({describe(grad_output)}) must have shape {list(out.shape)}, "
                         f"{expected} (x: {describe(operands[0])})")
    check_same_vma(fn, named, _ALIGN)
    if _packed(axis):
        (x,) = operands
        spec = without(result_spec((grad_output, x), tuple(x.shape)), axis)
        return [x.update(weak_type=False, sharding=x.sharding.update(spec=spec))]
    shape = tuple(operands[0].shape)
    return [result_aval(p, shape, (grad_output, *operands)) for p in operands]


swiglu_p.def_abstract_eval(lambda *operands, axis: _forward_aval("swiglu_p", operands, axis))
swiglu_tangent_p.def_abstract_eval(_tangent_abstract_eval)
swiglu_grad_p.def_abstract_eval(_grad_abstract_eval)

# ------------------------------------------------------- jnp evaluations --


def _forward_in_jnp(*operands, axis):
    return swiglu_value(*_split(operands, axis))


def _tangent_in_jnp(*operands, axis):
    n = 1 if _packed(axis) else 2
    return swiglu_tangent(*_split(operands[:n], axis), *_split(operands[n:], axis))


def _grad_in_jnp(grad_output, *operands, axis, **params):
    """SwiGluGrad in jnp: the lowering of empty arrays, which CANN's gradient
    rejects (nothing to compute, no call)."""
    del params
    da, db = swiglu_grads(grad_output, *_split(operands, axis))
    return [lax.concatenate([da, db], axis)] if _packed(axis) else [da, db]


mlir.register_lowering(swiglu_p, mlir.lower_fun(_forward_in_jnp, multiple_results=False))
mlir.register_lowering(swiglu_tangent_p, mlir.lower_fun(_tangent_in_jnp, multiple_results=False))
# Eager calls compile each primitive alone and run it, as JAX's own primitives
# are run: jit's values, also under jax.disable_jit().
for _prim in (swiglu_p, swiglu_tangent_p, swiglu_grad_p):
    _prim.def_impl(functools.partial(xla.apply_primitive, _prim))

# ================================================================= the call ==


def _kernel_call(grad_output, *operands, axis, overwrite=False):
    """The custom call. Packed: operands (grad_output, x), attribute ``axis``,
    one result shaped like x; pair: (grad_output, a, b), ``axis`` 0 (ignored),
    results (da, db). Past ``MAX_RANK`` dimensions the operands are reshaped
    (the packed form's split axis kept its own dimension between the merged
    ones before and after it). Empty arrays get empty results without a call.

    With ``overwrite`` the results are written over inputs of their shape
    (the kernel reads each element before writing it): packed, dx over x;
    pair, da over grad_output and db over a. A backward pass asks for it, as
    the cotangent and, in a feed-forward, the activations are dead after the
    call: the gradient then needs no buffers of its own. Where an input is
    still live (or an argument not donated), XLA copies it first."""
    x = operands[0]
    shape, dtype = tuple(x.shape), x.dtype
    if is_empty(shape):
        return _grad_in_jnp(grad_output, *operands, axis=axis)
    result = jax.ShapeDtypeStruct
    if _packed(axis):
        g, x = merge_around(grad_output, axis), merge_around(x, axis)
        k = axis if x.ndim == len(shape) else 1
        aliases = {1: 0} if overwrite else None
        (dx,) = jax.ffi.ffi_call(SWIGLU_TARGET, (result(x.shape, dtype),),
                                 input_output_aliases=aliases)(g, x, axis=np.int64(k))
        return [dx.reshape(shape)]
    g, a, b = (merge_around(v, None) for v in (grad_output, *operands))
    flat = result(g.shape, dtype)
    aliases = {0: 0, 1: 1} if overwrite else None
    da, db = jax.ffi.ffi_call(SWIGLU_TARGET, (flat, flat), input_output_aliases=aliases)(g, a, b, axis=np.int64(0))
    return [da.reshape(shape), db.reshape(shape)]


# --------------------------------------------------------------- sharding --


@functools.cache
def _per_shard(arity: int, axis, overwrite: bool = False):
    """swiglu_grad_p under ``custom_partitioning``: each device binds it on
    its own shard (as one call: ``devices=None``)."""

    def bind_local(*operands):
        return tuple(swiglu_grad_p.bind(*operands, axis=axis, devices=None, overwrite=overwrite))

    if _packed(axis):
        return partitioned(bind_local, functools.partial(packed_specs, "swiglu_grad_p", "silu_mul", axis),
                           functools.partial(packed_sharding_rule, axis))
    return partitioned(bind_local, broadcast_specs, broadcast_sharding_rule)


register_custom_call(swiglu_grad_p, "SwiGluGrad", _kernel_call, _per_shard, overwrite="overwrite")


# ================================================================== rules ==


def _forward_jvp(primals, tangents, *, axis):
    """The tangent primitive, linear in the tangents (zeros instantiated, so
    that the backward pass is one call computing both halves)."""
    out = swiglu_p.bind(*primals, axis=axis)
    return out, swiglu_tangent_p.bind(*instantiate(tangents), *primals, axis=axis)


def _forward_transpose(ct, *operands, axis):
    """silu(a) * b is linear in b alone (pair form, a known): b's cotangent is
    silu(a) * ct, this primitive again. ``jax.linear_transpose`` of
    ``lambda up: silu_mul(gate, up)`` needs it, as it needs ``mul``'s."""
    if _packed(axis) or ad.is_undefined_primal(operands[0]):
        raise ValueError("swiglu, silu_mul: silu(a) * b is linear in b alone (with a fixed); it cannot be "
                         "transposed in a, nor in a packed x")
    a, b = operands
    if is_zero(ct):
        return [None, ad.Zero(b.aval)]
    return [None, swiglu_p.bind(a, ct)]


def _tangent_transpose(ct, *operands, axis):
    """The backward pass proper: one SwiGluGrad call of the cotangent."""
    n = 1 if _packed(axis) else 2
    tangents, primals = operands[:n], operands[n:]
    if any(ad.is_undefined_primal(p) for p in primals):
        raise ValueError("swiglu, silu_mul: the tangent b*s'(a)*a_dot + silu(a)*b_dot is linear in the tangents "
                         "only; it cannot be transposed in a or b")
    nones = [None] * len(primals)
    if is_zero(ct):
        return [ad.Zero(t.aval) if ad.is_undefined_primal(t) else None for t in tangents] + nones
    ct, *primals = vary_alike(ct, *primals)
    # The backward pass: its results may take the dead cotangent's and
    # activations' buffers (_kernel_call).
    cts = swiglu_grad_p.bind(ct, *primals, axis=axis, overwrite=True)
    return [c if ad.is_undefined_primal(t) else None for c, t in zip(cts, tangents)] + nones


def _times_s_prime(t, a):
    """t * s'(a), rounded to a's dtype: silu's tangent primitive (its transpose is SiluGrad's call)."""
    return silu_tangent_p.bind(t, a, overwrite=False)


def _tangent_jvp(primals, tangents, *, axis):
    """d/d(a, b) of b*s'(a)*a_dot + silu(a)*b_dot along (a_d, b_d):
    s'(a)*(b_dot*a_d + a_dot*b_d) + b*s''(a)*a_dot*a_d; in the tangents, itself."""
    n = 1 if _packed(axis) else 2
    out = swiglu_tangent_p.bind(*primals, axis=axis)
    terms = []
    if not all(is_zero(t) for t in tangents[:n]):
        terms.append(swiglu_tangent_p.bind(*instantiate(tangents[:n]), *primals[n:], axis=axis))
    if not all(is_zero(t) for t in tangents[n:]):
        a_dot, b_dot = _split(primals[:n], axis)
        a, b = _split(primals[n:], axis)
        a_d, b_d = _split(instantiate(tangents[n:]), axis)
        first = _times_s_prime(lax.add(lax.mul(b_dot, a_d), lax.mul(a_dot, b_d)), a)
        terms.append(lax.add(first, times_silu_second(a, b, a_dot, a_d)))
    return out, terms[0] if len(terms) == 1 else lax.add(*terms)


def _grad_jvp(primals, tangents, *, axis, devices, overwrite):
    """Linear in grad_output (the call again); in x (or a, b), written in lax:
    d(dA) = s'(A)*(g*B_d) + g*B*s''(A)*A_d, d(dB) = s'(A)*(g*A_d)."""
    grad_output, *operands = primals
    g_dot, *x_dots = tangents
    outs = swiglu_grad_p.bind(grad_output, *operands, axis=axis, devices=devices, overwrite=overwrite)
    terms = []
    if not is_zero(g_dot):
        terms.append(swiglu_grad_p.bind(g_dot, *operands, axis=axis, devices=devices))
    if not all(is_zero(t) for t in x_dots):
        a, b = _split(operands, axis)
        a_d, b_d = _split(instantiate(x_dots), axis)
        g = grad_output
        da = lax.add(_times_s_prime(lax.mul(g, b_d), a), times_silu_second(a, g, b, a_d))
        db = _times_s_prime(lax.mul(g, a_d), a)
        terms.append([lax.concatenate([da, db], axis)] if _packed(axis) else [da, db])
    if len(terms) == 1:
        return outs, terms[0]
    return outs, [lax.add(u, v) for u, v in zip(*terms)]


def _grad_transpose(cts, grad_output, *operands, axis, devices, overwrite):
    """Linear in grad_output: its cotangent is the tangent primitive of the
    cotangents, g_ct = ct_dA*B*s'(A) + ct_dB*silu(A)."""
    del devices, overwrite
    if any(ad.is_undefined_primal(p) for p in operands):
        raise ValueError("swiglu_grad is linear in grad_output only; it cannot be transposed in x (or a, b)")
    nones = [None] * len(operands)
    if all(is_zero(c) for c in cts):
        return [ad.Zero(grad_output.aval), *nones]
    return [swiglu_tangent_p.bind(*instantiate(cts), *operands, axis=axis), *nones]


ad.primitive_jvps[swiglu_p] = _forward_jvp
ad.primitive_jvps[swiglu_tangent_p] = _tangent_jvp
ad.primitive_jvps[swiglu_grad_p] = _grad_jvp
ad.primitive_transposes[swiglu_p] = _forward_transpose
ad.primitive_transposes[swiglu_tangent_p] = _tangent_transpose
ad.primitive_transposes[swiglu_grad_p] = _grad_transpose
for _prim in (swiglu_p, swiglu_tangent_p, swiglu_grad_p):
    batching.primitive_batchers[_prim] = batch_first_rule(_prim, "axis")

# ======================================================== public functions ==


def _native_grads(grad_output, a, b):
    """(da, db) by JAX's autodiff of ``jax.nn.silu(a) * b``: the float64 path,
    matching ``jax.grad`` of the forward's float64 path."""
    return jax.vjp(lambda u, v: jax.nn.silu(u) * v, a, b)[1](grad_output)


def swiglu(x, axis=-1):
    """SwiGLU of a packed array: ``silu(A) * B`` where ``x = [A | B]`` along ``axis``.

    The layout of CANN's ``aclnnSwiGlu`` and ``torch_npu.npu_swiglu``: the
    first half A goes through silu, the second B is linear (``jax.nn.glu``
    gates the other half, with a sigmoid). The forward value is computed in
    float32 and rounded once (XLA fuses it); reverse mode runs one
    ``jax_ascend_silu_swiglu_grad`` custom call per ``swiglu``, keeping only
    ``x`` for the backward pass (silu(A) is recomputed there). Forward mode
    and derivatives of every order work. float64 runs ``jax.numpy``.

    Args:
      x: float32, float16 or bfloat16 array (float64 with ``jax_enable_x64``),
        of even size along ``axis``.
      axis: the axis along which x holds [A | B]; -1, the last, by default.
        On sharded arrays it must not be sharded (other axes may be).

    Returns:
      ``silu(A) * B``: x's shape with ``axis`` halved, x's dtype.

    Raises:
      TypeError: x not floating point (integer, boolean, complex); axis not an int.
      ValueError: x a scalar, axis out of range, an odd size along axis, or
        axis sharded over devices.

    Examples:
      >>> import jax, jax.numpy as jnp, numpy as np
      >>> import jax_ascend_silu as jas
      >>> x = jnp.array([[1.0, -2.0, 3.0, 4.0]])  # A = [1, -2], B = [3, 4]
      >>> np.asarray(jas.swiglu(x)).round(4)
      array([[ 2.1932, -0.9536]], dtype=float32)
      >>> jax.grad(lambda v: jas.swiglu(v).sum())(x).shape
      (1, 4)
    """
    x = jnp.asarray(x)
    aval = jax.typeof(x)
    check_float("swiglu", "x", aval)
    k = _normalise_axis("swiglu", axis, aval)
    check_packed("swiglu", aval, k, "silu_mul")
    if not kernel_takes(aval):
        a, b = halves(x, k)
        return jax.nn.silu(a) * b
    return swiglu_p.bind(x, axis=k)


def silu_mul(gate, up):
    """SwiGLU of two operands: ``silu(gate) * up``, as Llama-style MLPs write it.

    ``gate`` and ``up`` broadcast (NumPy rules); a Python scalar takes the
    other's dtype. The forward value is computed in float32 and rounded once
    (XLA fuses it); reverse mode runs one ``jax_ascend_silu_swiglu_grad``
    custom call per ``silu_mul``, keeping only ``gate`` and ``up`` for the
    backward pass (broadcast operands: their broadcast forms). Forward mode
    and derivatives of every order work. float64 runs ``jax.numpy``.

    Args:
      gate: float32, float16 or bfloat16 array (float64 with
        ``jax_enable_x64``), the operand that goes through silu.
      up: the linear operand, same dtype.

    Returns:
      ``silu(gate) * up`` of the broadcast shape.

    Raises:
      TypeError: an operand not floating point, or differing dtypes.
      ValueError: shapes that do not broadcast.

    Examples:
      >>> import jax, jax.numpy as jnp, numpy as np
      >>> import jax_ascend_silu as jas
      >>> gate, up = jnp.array([1.0, -2.0]), jnp.array([3.0, 4.0])
      >>> np.asarray(jas.silu_mul(gate, up)).round(4)
      array([ 2.1932, -0.9536], dtype=float32)
      >>> d_gate, d_up = jax.grad(lambda g, u: jas.silu_mul(g, u).sum(), argnums=(0, 1))(gate, up)
      >>> np.asarray(d_up).round(4)
      array([ 0.7311, -0.2384], dtype=float32)
    """
    gate, up = float_operands("silu_mul", [("gate", gate), ("up", up)])
    _, (gate, up) = broadcast_all("silu_mul", [("gate", gate), ("up", up)])
    if not kernel_takes(jax.typeof(gate)):
        return jax.nn.silu(gate) * up
    return swiglu_p.bind(gate, up)


def swiglu_grad(grad_output, x, axis=-1):
    """The backward pass of ``swiglu``, packed as x: ``aclnnSwiGluGrad`` of CANN.

    For ``x = [A | B]`` along ``axis`` it returns ``[dA | dB]``, x's shape,
    with ``dA = grad_output * B * s'(A)`` and ``dB = grad_output * silu(A)``
    (s the SiLU), computed in float32 and rounded once, through one
    ``jax_ascend_silu_swiglu_grad`` custom call. Empty arrays (which CANN
    rejects) give an empty result without a call; float64 runs ``jax.numpy``.
    Works under every transformation, as ``silu_grad`` does.

    Args:
      grad_output: the cotangent of ``swiglu(x, axis)``: x's shape with
        ``axis`` halved, x's dtype.
      x: the forward input, float32, float16 or bfloat16, even along ``axis``.
      axis: the axis along which x holds [A | B]; -1 by default.

    Returns:
      ``dx``, x's shape and dtype.

    Raises:
      TypeError: operands not floating point, or differing dtypes.
      ValueError: as ``swiglu``, and grad_output of the wrong shape.

    Examples:
      >>> import jax.numpy as jnp, numpy as np
      >>> import jax_ascend_silu as jas
      >>> x = jnp.array([1.0, -2.0, 3.0, 4.0])  # A = [1, -2], B = [3, 4]
      >>> np.asarray(jas.swiglu_grad(jnp.ones(2), x)).round(4)  # [dA | dB]
      array([ 2.783 , -0.3631,  0.7311, -0.2384], dtype=float32)
    """
    fn = "swiglu_grad"
    grad_output, x = float_operands(fn, [("grad_output", grad_output), ("x", x)])
    aval = jax.typeof(x)
    k = _normalise_axis(fn, axis, aval)
    half = check_packed(fn, aval, k, "silu_mul")
    if tuple(grad_output.shape) != half:
        raise ValueError(f"{fn}: grad_output ({describe(grad_output)}) must have shape {list(half)}, x's "
                         f"({describe(aval)}) with axis {k} halved: the shape of swiglu(x, axis={axis})")
    if not kernel_takes(aval):
        a, b = halves(x, k)
        return jnp.concatenate(_native_grads(grad_output, a, b), axis=k)
    (dx,) = swiglu_grad_p.bind(grad_output, x, axis=k)
    return dx


def silu_mul_grad(grad_output, gate, up):
    """The backward pass of ``silu_mul``: ``(d_gate, d_up)`` through one custom call.

    ``d_gate = grad_output * up * s'(gate)`` and ``d_up = grad_output *
    silu(gate)`` (s the SiLU), computed in float32 and rounded once, each
    summed back to its operand's shape where ``gate`` and ``up`` broadcast.
    Empty arrays give empty results without a call; float64 runs ``jax.numpy``.

    Args:
      grad_output: the cotangent of ``silu_mul(gate, up)``, of the broadcast
        shape of gate and up (or broadcasting to it), same dtype.
      gate, up: as for ``silu_mul``.

    Returns:
      ``(d_gate, d_up)``, shaped like gate and up.

    Raises:
      TypeError: operands not floating point, or differing dtypes.
      ValueError: shapes that do not broadcast, or grad_output of another shape.

    Examples:
      >>> import jax.numpy as jnp, numpy as np
      >>> import jax_ascend_silu as jas
      >>> d_gate, d_up = jas.silu_mul_grad(jnp.ones(2), jnp.array([1.0, -2.0]), jnp.array([3.0, 4.0]))
      >>> np.asarray(d_gate).round(4), np.asarray(d_up).round(4)
      (array([ 2.783 , -0.3631], dtype=float32), array([ 0.7311, -0.2384], dtype=float32))
    """
    fn = "silu_mul_grad"
    grad_output, gate, up = float_operands(fn, [("grad_output", grad_output), ("gate", gate), ("up", up)])
    shape, (a, b) = broadcast_all(fn, [("gate", gate), ("up", up)])
    if not broadcasts_to(grad_output, shape):
        raise ValueError(f"{fn}: grad_output ({describe(grad_output)}) must have shape {list(shape)}, the shape of "
                         f"silu_mul(gate, up) for gate ({describe(gate)}) and up ({describe(up)}), or broadcast to it")
    grad_output = jnp.broadcast_to(grad_output, shape)
    if not kernel_takes(jax.typeof(a)):
        da, db = _native_grads(grad_output, a, b)
    else:
        da, db = swiglu_grad_p.bind(grad_output, a, b)
    return sum_to_shape(da, tuple(gate.shape)), sum_to_shape(db, tuple(up.shape))
