# Types of the native CPU module built from ffi/ (NB_MODULE(_silu_grad_cpu, m) in
# ffi/cpu/module.cc): one stub per m.def, same names and parameters; a submodule
# (m.def_submodule) gets a file of its own here. tests/test_packaging.py
# compares these stubs with what nanobind reports for the built module.

from typing import Any

from . import kernel as kernel

def registrations() -> dict[str, Any]:
    """FFI targets for platform 'cpu': {name: PyCapsule}."""

def isa() -> str:
    """The instruction set the kernel runs with on this processor."""

def supported_isas() -> list[str]:
    """Instruction sets this build and processor can run."""
