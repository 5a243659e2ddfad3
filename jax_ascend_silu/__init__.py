"""jax_ascend_silu: SiLU backward (SiluGrad) and fused SwiGLU (SwiGluGrad) as XLA custom calls for JAX.

- ``silu(x)``: SiLU whose backward pass runs the SiluGrad kernel.
- ``silu_grad(grad_output, x)``: the SiluGrad primitive called directly.
- ``silu_grad_p``: the primitive itself.
- ``swiglu(x, axis)``, ``silu_mul(gate, up)``: SwiGLU, ``silu(A) * B``, packed
  (CANN's layout) or as two operands, whose backward pass is one custom call.
- ``swiglu_grad``, ``silu_mul_grad``, ``swiglu_grad_p``: SwiGLU's gradient
  (CANN's ``aclnnSwiGluGrad``) called directly, and its primitive.
- ``backends()``: which backends (cpu, cuda, ascend) were compiled and the
  platforms their handlers are registered for.
- ``route(f)``: runs ``f`` (code you don't own) with the backward pass of its
  ``jax.nn.silu`` calls through the kernel, each ``silu(a) * b`` (SwiGLU) fused
  into one operation.
- ``route_report(f)``: what ``route`` fuses and routes in ``f``, and why it
  left a SwiGLU-like pattern alone (a ``RouteReport``).
"""

from . import _environment
from ._ffi import backends
from ._version import __version__
from .activation import silu
from .op import silu_grad, silu_grad_p
from .route import RouteReport, route, route_report
from .swiglu import silu_mul, silu_mul_grad, swiglu, swiglu_grad, swiglu_grad_p

_environment.warn_about_problems()

__all__ = [
    "RouteReport",
    "__version__",
    "backends",
    "route",
    "route_report",
    "silu",
    "silu_grad",
    "silu_grad_p",
    "silu_mul",
    "silu_mul_grad",
    "swiglu",
    "swiglu_grad",
    "swiglu_grad_p",
]
