"""Loads the native extensions and registers their XLA FFI targets, once, at import.

The CPU extension is always built. The CUDA and Ascend extensions are optional
(CMake options ``JAX_ASCEND_SILU_CUDA`` and ``JAX_ASCEND_SILU_ASCEND``): each
registers its handler for its platform when it imports, and is otherwise
absent without error. :func:`backends` reports what happened.
"""

from __future__ import annotations

import importlib
import importlib.util

import jax

from . import _silu_grad_cpu as ext

#: The custom-call target every backend registers under its own platform name.
TARGET = "jax_ascend_silu_silu_grad"

# (backend, extension module, XLA platform its handler is registered for)
_BACKENDS = (
    ("cpu", "_silu_grad_cpu", "cpu"),
    ("cuda", "_silu_grad_cuda", "CUDA"),
    ("ascend", "_silu_grad_ascend", "ASCEND"),
)


def _jax_cuda_plugin_present() -> bool:
    """Whether jax's CUDA PJRT plugin is installed (checked without starting any backend)."""
    try:
        return any(importlib.util.find_spec(f"jax_plugins.xla_cuda{v}") for v in (12, 13))
    except ImportError:  # no jax_plugins namespace at all
        return False


def _load(backend: str, module: str, platform: str) -> dict:
    name = f"{__package__}.{module}"
    if importlib.util.find_spec(name) is None:
        return {"compiled": False, "platforms": [], "detail": "not built"}
    try:
        mod = importlib.import_module(name)
    except ImportError as err:  # e.g. the CANN runtime libraries are not on the library path
        return {"compiled": True, "platforms": [], "detail": f"built, but failed to load: {err}"}
    detail = mod.build_info() if hasattr(mod, "build_info") else f"kernel ISA {ext.isa()}"
    if backend == "cuda" and not _jax_cuda_plugin_present():
        detail += "; not registered: jax's CUDA plugin is not installed"
        return {"compiled": True, "platforms": [], "detail": detail}
    for target, capsule in mod.registrations().items():
        jax.ffi.register_ffi_target(target, capsule, platform=platform)
    return {"compiled": True, "platforms": [platform], "detail": detail}


_STATUS = {backend: _load(backend, module, platform) for backend, module, platform in _BACKENDS}


def backends() -> dict[str, dict]:
    """Which backends this installation has.

    Returns ``{backend: {"compiled": bool, "platforms": [XLA platform names its
    handler is registered for], "detail": str}}`` for ``"cpu"``, ``"cuda"`` and
    ``"ascend"``. A compiled backend is registered when its module loads (and,
    for CUDA, when jax's CUDA plugin is installed).
    """
    return {name: {**status, "platforms": list(status["platforms"])} for name, status in _STATUS.items()}


def workspace_size(grad_output_shape, self_shape, out_shape, dtype) -> int:
    """Workspace bytes phase 1 plans for one call (0 for most calls)."""
    return int(ext.workspace_size(list(grad_output_shape), list(self_shape), list(out_shape), dtype.name))
