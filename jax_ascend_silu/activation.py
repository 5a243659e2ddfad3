"""SiLU with its backward pass through the SiluGrad custom call.

``silu_p`` is SiLU as a primitive: its value is ``jax.nn.silu``'s, and its
JVP is ``s'(x) * t``, written as a small primitive that is linear in ``t``:

- forward mode (``jax.jvp``, ``jax.jacfwd``) evaluates it as elementwise
  ``jax.numpy``, which XLA fuses and shards like any elementwise op;
- reverse mode transposes it, and its transpose is SiluGrad of the
  cotangent: one custom call per SiLU in the backward pass, kept per shard on
  sharded arrays.

A primitive rather than ``jax.custom_jvp`` (or ``custom_vjp``, which would
give no forward mode): differentiating a ``custom_jvp`` switches
``jax_debug_nans`` off for jitted functions that already ran (``op.py`` shows
the JAX bug), where ``jax.nn.silu``'s gradient leaves it on.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ._primitive import elementwise_primitive
from .op import silu_tangent_p
from .operands import describe, kernel_takes

# ------------------------------------------------------------------- silu --

# silu's backward pass writes its result over the incoming cotangent, dead after it.
silu_p = elementwise_primitive("jax_ascend_silu_silu", __name__, "silu_p", jax.nn.silu,
                               lambda t, x: silu_tangent_p.bind(t, x, overwrite=True))


def silu(x):
    """``x * sigmoid(x)``, differentiated by the SiluGrad kernel.

    The forward pass is :func:`jax.nn.silu`. :func:`jax.grad`, :func:`jax.vjp`
    and every other reverse-mode transformation run the backward pass as the
    ``jax_ascend_silu_silu_grad`` custom call (one per call of ``silu``);
    forward mode (:func:`jax.jvp`, :func:`jax.jacfwd`) works too and computes
    ``s'(x) * t`` in ``jax.numpy``. Derivatives of every order are defined.

    Inputs the kernel does not take, float64 (with ``jax_enable_x64``), run
    ``jax.nn.silu`` and its own autodiff instead, as ``route`` does: same
    values, no custom call. Any rank is taken.

    Raises:
      TypeError: ``x`` is not a floating-point array (integers, complex).

    Examples:
      >>> import jax
      >>> import jax.numpy as jnp
      >>> import jax_ascend_silu as jas
      >>> x = jnp.array([-1.0, 0.0, 2.0], jnp.float32)
      >>> [round(v, 4) for v in jas.silu(x).tolist()]
      [-0.2689, 0.0, 1.7616]
      >>> dx = jax.grad(lambda v: jas.silu(v).sum())(x)  # backward: the SiluGrad custom call
      >>> [round(v, 4) for v in dx.tolist()]
      [0.0723, 0.5, 1.0908]
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
    return silu_p.bind(x)
