# Types of the optional ASCEND backend module built from ffi/ascend/module.cc
# (NB_MODULE(_silu_grad_ascend, m)); tests/test_packaging.py compares it with the
# built module where that backend is compiled.

from typing import Any

PLATFORM: str

def registrations() -> dict[str, Any]:
    """FFI targets for platform 'ASCEND': {name: PyCapsule}."""

def build_info() -> str:
    """What this module was linked against: the CANN toolkit's path, or the test fake."""
