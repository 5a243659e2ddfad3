"""jax_ascend_silu: SiLU backward (SiluGrad) as an XLA custom call for JAX.

- ``silu(x)``: SiLU whose backward pass runs the SiluGrad kernel.
- ``silu_grad(grad_output, x)``: the SiluGrad primitive called directly.
- ``silu_grad_p``: the primitive itself.
- ``backends()``: which backends (cpu, cuda, ascend) were compiled and the
  platforms their handlers are registered for.
- ``route(f)``: runs ``f`` (code you don't own) with the backward pass of its
  ``jax.nn.silu`` calls through the kernel.
"""

import importlib.metadata as _metadata
import pathlib as _pathlib


def _find_installed_extension() -> None:
    """Run from a source checkout (``python -m jax_ascend_silu`` in the
    repository root puts this folder first on sys.path), the package folder has
    no compiled extension; the installed package's folder is then searched
    too, so the installed extension modules load."""
    here = _pathlib.Path(__file__).resolve().parent
    if any(here.glob("_silu_grad_cpu*.so")) or any(here.glob("_silu_grad_cpu*.pyd")):
        return
    try:
        installed = _pathlib.Path(str(_metadata.distribution("jax_ascend_silu").locate_file("jax_ascend_silu")))
    except _metadata.PackageNotFoundError:
        return
    if installed.resolve() != here and installed.is_dir():
        __path__.append(str(installed))


_find_installed_extension()

from ._ffi import backends  # noqa: E402
from ._version import __version__  # noqa: E402
from .activation import silu  # noqa: E402
from .partitioning import silu_grad  # noqa: E402
from .primitive import silu_grad_p  # noqa: E402
from .route import route  # noqa: E402

__all__ = ["__version__", "backends", "route", "silu", "silu_grad", "silu_grad_p"]
