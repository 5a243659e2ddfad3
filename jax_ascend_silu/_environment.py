"""The ``JAX_ASCEND_SILU_*`` environment variables the CPU backend reads, as it read them.

They are parsed once, in C++ (``kernel/cpu/environment.cc``), at first use; the
CPU module's ``environment()`` reports each one's value and whether the backend
applies it. This module only words that result: a warning at import naming a
variable set to a value the backend ignores and what it accepts, and what
``info`` states is in effect.
"""

from __future__ import annotations

import os
import warnings

THREADS = "JAX_ASCEND_SILU_THREADS"
ISA = "JAX_ASCEND_SILU_ISA"


def _kernel():
    from ._ffi import ext  # the compiled CPU module

    return ext


def _setting(name: str) -> dict:
    setting = dict(_kernel().environment()[name])
    if setting["value"] is not None:
        setting["value"] = os.fsdecode(setting["value"])
    return setting


def threads_cap() -> int | None:
    """The cap JAX_ASCEND_SILU_THREADS puts on the threads per CPU call, or None."""
    return _setting(THREADS)["cap"]


def isa_cap() -> str | None:
    """The instruction set JAX_ASCEND_SILU_ISA chose, or None when unset or ignored."""
    return _setting(ISA)["isa"]


def problems() -> list[str]:
    """One line per variable set to a value the backend ignores."""
    found = []
    threads = _setting(THREADS)
    if threads["set"] and not threads["accepted"]:
        found.append(f"{THREADS}={threads['value']!r} is ignored: it takes a positive integer (threads per CPU "
                     "call, e.g. 4); without one a call uses a thread per CPU")
    isa = _setting(ISA)
    if isa["set"] and not isa["accepted"]:
        ext = _kernel()
        names = ext.isa_names()
        why = (f"this processor runs only {', '.join(ext.supported_isas())}" if isa["value"] in names
               else f"it takes one of {', '.join(names)} (lower case)")
        found.append(f"{ISA}={isa['value']!r} is ignored: {why}; the kernel uses the best instruction set "
                     f"the processor has ({ext.isa()})")
    return found


def warn_about_problems() -> None:
    for line in problems():
        warnings.warn(line, RuntimeWarning, stacklevel=3)
