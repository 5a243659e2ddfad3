"""Primitives of this package: how they pickle and how the elementwise ones
are defined, once.

The package's operations are primitives rather than ``jax.custom_jvp``
functions (``op.py`` says why): each is compiled alone when called eagerly,
lowers to its ``jax.numpy`` expression (or to the custom call) under ``jit``,
and carries its own derivative.
"""

from __future__ import annotations

import functools
import importlib

from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir, xla


class ModulePrimitive(Primitive):
    """A primitive that pickles as a reference to the module attribute holding
    it, so a function shipped with (cloud)pickle binds the very primitive its
    rules are registered for, not a copy without them."""

    def __init__(self, name: str, module: str, attribute: str):
        super().__init__(name)
        self._where = (module, attribute)

    def __reduce__(self):
        return _module_attribute, self._where


def _module_attribute(module: str, attribute: str):
    return getattr(importlib.import_module(module), attribute)


def elementwise_primitive(name: str, module: str, attribute: str, fn, derivative, out_dtype=None):
    """A unary elementwise primitive with value ``fn(x)`` and JVP
    ``derivative(t, x)``; ``out_dtype(dtype)`` is its result's dtype (x's by default).

    Eager calls compile it alone (``xla.apply_primitive``, as JAX's own
    primitives are run), so they give jit's values, also under
    ``jax.disable_jit()``, and ``jax_debug_nans`` names it."""
    prim = ModulePrimitive(name, module, attribute)
    if out_dtype is None:
        prim.def_abstract_eval(lambda x: x)
    else:
        prim.def_abstract_eval(lambda x: x.update(dtype=out_dtype(x.dtype), weak_type=False))
    prim.def_impl(functools.partial(xla.apply_primitive, prim))
    mlir.register_lowering(prim, mlir.lower_fun(fn, multiple_results=False))
    batching.defvectorized(prim)
    ad.defjvp(prim, derivative)
    return prim
