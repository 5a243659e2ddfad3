"""Loads the native extension and registers its XLA FFI targets, once, at import."""

from __future__ import annotations

import jax

from . import _silu_grad_ext as ext

#: The custom-call target every backend registers under its own platform name.
TARGET = "jax_ascend_silu_silu_grad"

for _name, _capsule in ext.registrations().items():
    jax.ffi.register_ffi_target(_name, _capsule, platform="cpu")


def workspace_size(grad_output_shape, self_shape, out_shape, dtype) -> int:
    """Workspace bytes phase 1 plans for one call (0 for most calls)."""
    return int(ext.workspace_size(list(grad_output_shape), list(self_shape), list(out_shape), dtype.name))
