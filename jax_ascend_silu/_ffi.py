"""The backends: one table, read by the loader below, the lowering rules
(``op.py``), :func:`backends`, ``python -m jax_ascend_silu info`` and the tests.

The CPU extension is always built. The CUDA and Ascend extensions are optional
(CMake options ``JAX_ASCEND_SILU_CUDA`` and ``JAX_ASCEND_SILU_ASCEND``): each
registers its handler for its platform when it imports, and is otherwise
absent without error.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util

import jax

from . import _silu_grad_cpu as ext

#: The custom-call target every backend registers under its own platform name
#: (named once, in ffi/handlers.h).
(TARGET,) = ext.registrations()


@dataclasses.dataclass(frozen=True)
class Backend:
    name: str  #: as backends() and the CLI report it
    module: str  #: its extension module in this package
    xla_platform: str  #: the platform its FFI handler is registered for
    #: JAX's platform name for its lowering rule; None is the default rule, which
    #: serves an Ascend PJRT plugin whatever name it gives its platform.
    lowering_platform: str | None
    #: Whether its handler may write the result over grad_output. CANN does not
    #: document whether aclnnSiluBackward may, so the Ascend rule never asks.
    in_place: bool


BACKENDS = (
    Backend("cpu", "_silu_grad_cpu", "cpu", "cpu", in_place=True),
    Backend("cuda", "_silu_grad_cuda", "CUDA", "cuda", in_place=True),
    Backend("ascend", "_silu_grad_ascend", "ASCEND", None, in_place=False),
)


def _jax_cuda_plugin_present() -> bool:
    """Whether jax's CUDA PJRT plugin is installed (checked without starting any backend)."""
    try:
        return any(importlib.util.find_spec(f"jax_plugins.xla_cuda{v}") for v in (12, 13))
    except ImportError:  # no jax_plugins namespace at all
        return False


def _load(backend: Backend) -> dict:
    name = f"{__package__}.{backend.module}"
    if importlib.util.find_spec(name) is None:
        return {"compiled": False, "platforms": [], "detail": "not built"}
    try:
        mod = importlib.import_module(name)
    except ImportError as err:  # e.g. the CANN runtime libraries are not on the library path
        return {"compiled": True, "platforms": [], "detail": f"built, but failed to load: {err}"}
    detail = mod.build_info() if hasattr(mod, "build_info") else f"kernel ISA {ext.isa()}"
    if backend.name == "cuda" and not _jax_cuda_plugin_present():
        detail += "; not registered: jax's CUDA plugin is not installed"
        return {"compiled": True, "platforms": [], "detail": detail}
    for target, capsule in mod.registrations().items():
        jax.ffi.register_ffi_target(target, capsule, platform=backend.xla_platform)
    return {"compiled": True, "platforms": [backend.xla_platform], "detail": detail}


_STATUS = {backend.name: _load(backend) for backend in BACKENDS}


def backends() -> dict[str, dict]:
    """Which backends this installation has.

    Returns ``{backend: {"compiled": bool, "platforms": [XLA platform names its
    handler is registered for], "detail": str}}`` for each backend of
    ``BACKENDS`` (cpu, cuda, ascend). A compiled backend is registered when its
    module loads (and, for CUDA, when jax's CUDA plugin is installed).
    """
    return {name: {**status, "platforms": list(status["platforms"])} for name, status in _STATUS.items()}
