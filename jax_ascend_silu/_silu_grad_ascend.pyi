# Types of the Ascend backend module built from ffi/ascend/module.cc
# (NB_MODULE(_silu_grad_ascend, m)), present in every build;
# tests/test_packaging.py compares it with the built module.

from typing import Any

def registrations() -> dict[str, Any]:
    """FFI targets for platform 'ASCEND': {name: PyCapsule}."""

def build_info() -> str:
    """How this module reaches CANN."""

def cann() -> dict[str, Any]:
    """What the search for CANN found (once per process, on first use): found, problem,
    libraries (role, name, path, origin), operator_library (the file aclnnSiluBackward
    comes from, or ''), version, version_note, notes."""
