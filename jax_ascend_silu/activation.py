"""SiLU with its backward pass through the SiluGrad custom call.

``silu`` is a ``jax.custom_jvp`` whose tangent is ``s'(x) * t``, written as a
small primitive that is linear in ``t``:

- forward mode (``jax.jvp``, ``jax.jacfwd``) evaluates it as elementwise
  ``jax.numpy``, which XLA fuses and shards like any elementwise op;
- reverse mode transposes it, and its transpose is ``silu_grad(ct, x)``: one
  SiluGrad custom call per SiLU in the backward pass, kept per shard on
  sharded arrays.

A ``jax.custom_vjp`` would give the same backward pass but no forward mode.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.interpreters import ad, batching, mlir

from .op import ModulePrimitive, compiled, silu_grad_overwriting, tangent
from .operands import describe, kernel_takes

# ------------------------------------------- the tangent s'(x) * t, linear in t --

_tangent_p = ModulePrimitive("jax_ascend_silu_silu_tangent", __name__, "_tangent_p")


def _tangent_in_jnp(t, x):
    """s'(x) * t: the SiluGrad JVP rule's term in grad_output, so forward mode
    through ``silu`` and through ``silu_grad`` round alike."""
    return tangent(None, x, t, None, t.shape)


_tangent_p.def_abstract_eval(lambda t, x: t)
_tangent_p.def_impl(compiled(_tangent_in_jnp))
mlir.register_lowering(_tangent_p, mlir.lower_fun(_tangent_in_jnp, multiple_results=False))


def _tangent_transpose(ct, t, x):
    if ad.is_undefined_primal(x):
        raise ValueError("silu: the tangent s'(x) * t is linear in t only; it cannot be transposed in x")
    if type(ct) is ad.Zero:
        return ad.Zero(t.aval), None
    # The backward pass proper: s'(x) * ct through the custom call, written
    # over ct, which is dead after it.
    return silu_grad_overwriting(ct, x), None


def _tangent_batch(args, dims):
    t, x = args
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    t, x = (jnp.moveaxis(a, d, 0) if d is not None else jnp.broadcast_to(a, (size, *a.shape))
            for a, d in zip(args, dims))
    return _tangent_p.bind(t, x), 0


def _x_term(x_dot, t, x):
    """d/dx of s'(x) * t along x_dot: t * s''(x) * x_dot (SiluGrad's JVP term in x)."""
    return tangent(t, x, None, x_dot, t.shape)


ad.primitive_transposes[_tangent_p] = _tangent_transpose
batching.primitive_batchers[_tangent_p] = _tangent_batch
ad.defjvp(_tangent_p, lambda t_dot, t, x: _tangent_p.bind(t_dot, x), _x_term)


# ------------------------------------------------------------------- silu --

_forward = compiled(jax.nn.silu)  # the values of jit under jax.disable_jit() too


@jax.custom_jvp
def _silu(x):
    return _forward(x)


@_silu.defjvp
def _silu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _silu(x), _tangent_p.bind(t, x)


def silu(x):
    """``x * sigmoid(x)``, differentiated by the SiluGrad kernel.

    The forward pass is ``jax.nn.silu``. ``jax.grad``, ``jax.vjp`` and every
    other reverse-mode transformation run the backward pass as the
    ``jax_ascend_silu_silu_grad`` custom call (one per call of ``silu``);
    forward mode (``jax.jvp``, ``jax.jacfwd``) works too and computes
    ``s'(x) * t`` in ``jax.numpy``. Derivatives of every order are defined.

    Inputs the kernel does not take, float64 (with ``jax_enable_x64``), run
    ``jax.nn.silu`` and its own autodiff instead, as ``route`` does: same
    values, no custom call. Any rank is taken.

    Raises:
      TypeError: ``x`` is not a floating-point array (integers, complex).
    """
    x = jnp.asarray(x)
    aval = jax.typeof(x)
    if not jnp.issubdtype(aval.dtype, jnp.floating):
        raise TypeError(
            f"silu: x has dtype {np.dtype(aval.dtype).name} ({describe(aval)}); SiLU takes floating-point "
            "arrays: float32, float16 or bfloat16 through the SiluGrad kernel (float64 runs jax.nn.silu). "
            "Cast x, e.g. x.astype(jnp.float32)."
        )
    if not kernel_takes(aval):
        return jax.nn.silu(x)
    return _silu(x)
