# Types of the optional CUDA backend module built from ffi/cuda/module.cc
# (NB_MODULE(_silu_grad_cuda, m)); tests/test_packaging.py compares it with the
# built module where that backend is compiled.

from typing import Any

PLATFORM: str

def registrations() -> dict[str, Any]:
    """FFI targets for platform 'CUDA': {name: PyCapsule}."""

def build_info() -> str:
    """The CUDA runtime and GPU architectures this module was compiled for."""
