"""jax_ascend_silu: SiLU backward (SiluGrad) as an XLA custom call for JAX.

- ``silu(x)``: SiLU whose backward pass runs the SiluGrad kernel.
- ``silu_grad(grad_output, x)``: the SiluGrad primitive called directly.
- ``silu_grad_p``: the primitive itself.
- ``backends()``: which backends (cpu, cuda, ascend) were compiled and the
  platforms their handlers are registered for.
- ``route(f)``: runs ``f`` (code you don't own) with the backward pass of its
  ``jax.nn.silu`` calls through the kernel.
"""

from . import _environment
from ._ffi import backends
from ._version import __version__
from .activation import silu
from .op import silu_grad, silu_grad_p
from .route import route

_environment.warn_about_problems()

__all__ = ["__version__", "backends", "route", "silu", "silu_grad", "silu_grad_p"]
