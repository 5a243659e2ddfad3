"""The ``JAX_ASCEND_SILU_*`` environment variables the CPU kernel reads, checked.

The kernel reads them itself (``kernel/cpu/dispatch.cc``, ``ffi/cpu/handler.cc``)
and ignores a value it cannot use; this module applies the same rules, so that
an ignored value is reported (a warning at import naming the variable and what
it accepts) and ``info`` states only what is in effect.
"""

from __future__ import annotations

import os
import warnings

THREADS = "JAX_ASCEND_SILU_THREADS"
ISA = "JAX_ASCEND_SILU_ISA"


def _kernel():
    from ._ffi import ext  # the ISA names are the compiled kernel's own

    return ext


def threads_cap() -> int | None:
    """JAX_ASCEND_SILU_THREADS as the kernel applies it: a positive decimal integer, else no cap."""
    text = os.environ.get(THREADS)
    if text is None or not text.isascii() or not text.isdigit():
        return None
    return int(text) or None


def isa_cap() -> str | None:
    """JAX_ASCEND_SILU_ISA as the kernel applies it, or None when unset or ignored."""
    value = os.environ.get(ISA)
    return value if value in _kernel().supported_isas() else None


def problems() -> list[str]:
    """One line per variable set to a value the kernel ignores."""
    found = []
    threads = os.environ.get(THREADS)
    if threads is not None and threads_cap() is None:
        found.append(f"{THREADS}={threads!r} is ignored: it takes a positive integer (threads per CPU "
                     "call, e.g. 4); without one a call uses XLA's intra-op pool")
    isa = os.environ.get(ISA)
    if isa is not None and isa_cap() is None:
        ext = _kernel()
        names = ext.isa_names()
        why = (f"this processor runs only {', '.join(ext.supported_isas())}" if isa in names
               else f"it takes one of {', '.join(names)} (lower case)")
        found.append(f"{ISA}={isa!r} is ignored: {why}; the kernel uses the best instruction set "
                     f"the processor has ({ext.isa()})")
    return found


def warn_about_problems() -> None:
    for line in problems():
        warnings.warn(line, RuntimeWarning, stacklevel=3)
