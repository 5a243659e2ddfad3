"""``route(f)``: run code you don't own with its SiLU backward pass through SiluGrad.

``jax.nn.silu`` (also reached as ``jax.nn.swish``, ``flax.linen.silu``,
``flax.nnx.silu``) is a jitted function named ``silu``, so in a jaxpr every
call of it is a ``jit`` (``pjit`` on older jax) equation with ``name='silu'``
whose body is ``x * logistic(x)``. ``route`` traces ``f`` to a jaxpr and
evaluates it again, replacing each such equation by ``jax_ascend_silu.silu``
(same forward values; backward through the custom call). Calls nested in
``jax.jit``, ``lax.scan``/``map``/``fori_loop``/``while_loop``, ``lax.cond``/``switch``
and ``jax.checkpoint`` are rewritten in place, keeping those primitives and
their parameters.

Left as they are, on purpose:
- SiLU in dtypes the kernel does not take (float64);
- SiLU inside a ``jax.custom_jvp``/``jax.custom_vjp`` function (its own
  derivative rule stays in charge) or inside ``shard_map``/``pmap`` bodies;
- SiLU that ``f`` already differentiates itself (``jax.grad`` inside ``f``):
  apply ``route`` to the function being differentiated (a warning says so).

Refused: a routed function called inside a Haiku transform, whose parameters
and state cannot cross route's own trace; route the transformed ``apply``.
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import jax
import numpy as np
from jax.extend.core import ClosedJaxpr, DebugInfo, DropVar, Jaxpr, JaxprEqn, Literal, Var

from .activation import silu
from .operands import kernel_takes

F = TypeVar("F", bound=Callable[..., Any])

#: Primitives whose inner jaxprs ``route`` rewrites (names across jax 0.10-0.12).
_CALLS = frozenset({"jit", "pjit", "closed_call", "core_call"})
_REWRITTEN = _CALLS | {"scan", "while", "cond", "remat2", "checkpoint"}


def route(f: F) -> F:
    """Runs ``f`` with every ``jax.nn.silu`` call in it differentiated by SiluGrad.

    ``f`` itself is not modified and nothing global is patched: ``route(f)``
    is a new function with the same signature, inputs and outputs (any
    pytrees) and the same forward values. Differentiate it as usual, e.g.
    ``jax.grad(route(loss))``; it composes with ``jax.jit`` (including
    ``static_argnums``), ``jax.vmap`` and ``jax.value_and_grad``.

    Array arguments (``jax.Array``, NumPy arrays and scalars) are traced, as
    under ``jax.jit``; every other leaf (Python numbers, strings, ``None``,
    callables) is passed to ``f`` unchanged, so Python control flow on it
    works as in ``f``.

    Raises:
      TypeError: ``f`` is not callable.
      RuntimeError: when the routed function is called inside a Haiku
        transform (``hk.transform``); route ``net.apply`` instead.
    """
    if not callable(f):
        raise TypeError(f"route: expected the function to route, got {type(f).__name__} {f!r}")

    @functools.wraps(f)
    def routed(*args: Any, **kwargs: Any) -> Any:
        _refuse_inside_haiku(f)
        leaves, treedef = jax.tree.flatten((args, kwargs))
        traced = [i for i, leaf in enumerate(leaves) if _is_array(leaf)]

        def flat_f(*arrays: Any) -> Any:
            full = list(leaves)
            for i, a in zip(traced, arrays):
                full[i] = a
            f_args, f_kwargs = jax.tree.unflatten(treedef, full)
            return _check_outputs(f, f(*f_args, **f_kwargs))

        arrays = [leaves[i] for i in traced]
        # Traced with jit on even under jax.disable_jit(): jax.nn.silu is only
        # recognisable as the jit call it is; the rewritten jaxpr is then
        # evaluated under the caller's setting.
        with jax.disable_jit(False):
            closed, out_shape = jax.make_jaxpr(flat_f, return_shape=True)(*arrays)
        _warn_if_differentiated(f, closed.jaxpr)
        out = _Router().eval(closed.jaxpr, closed.consts, arrays)
        return jax.tree.unflatten(jax.tree.structure(out_shape), [_plain(v) for v in out])

    return routed  # type: ignore[return-value]


def _check_outputs(f: Callable[..., Any], out: Any) -> Any:
    """f's outputs, or a TypeError naming route and f when one is not an array or number."""
    for path, leaf in jax.tree_util.tree_flatten_with_path(out)[0]:
        if not isinstance(leaf, (jax.Array, np.ndarray, np.generic, bool, int, float, complex)):
            raise TypeError(
                f"route({getattr(f, '__qualname__', repr(f))}): the routed function returned "
                f"{type(leaf).__name__} {leaf!r} at output{jax.tree_util.keystr(path) or ''}; a routed "
                "function must return arrays or numbers (in any pytree)")
    return out


def _plain(value: Any) -> Any:
    """A Python number that f returned as a constant, as the plain Python type
    (a jaxpr literal holds it as a subclass of int or float)."""
    if type(value) in (bool, int, float, complex) or isinstance(value, (np.generic, jax.Array)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, complex):
        return complex(value)
    return value


def _is_array(leaf: Any) -> bool:
    return isinstance(leaf, (jax.Array, np.ndarray, np.generic))


def _is_silu(eqn: JaxprEqn) -> bool:
    """Whether ``eqn`` calls ``jax.nn.silu``: a jit named ``silu`` computing
    ``mul(x, logistic(x))`` on its single operand."""
    if eqn.primitive.name not in _CALLS or eqn.params.get("name") != "silu":
        return False
    if len(eqn.invars) != 1 or len(eqn.outvars) != 1:
        return False
    body = eqn.params["jaxpr"].jaxpr
    if len(body.eqns) != 2 or body.constvars:
        return False
    logistic, mul = body.eqns
    (x,) = body.invars
    return (
        logistic.primitive.name == "logistic"
        and list(logistic.invars) == [x]
        and mul.primitive.name == "mul"
        and {id(v) for v in mul.invars} == {id(x), id(logistic.outvars[0])}
        and list(body.outvars) == list(mul.outvars)
    )


def _supported(aval: Any) -> bool:
    """The kernel takes this operand (otherwise jax.nn.silu stays)."""
    return isinstance(aval, jax.core.ShapedArray) and kernel_takes(aval)


def _refuse_inside_haiku(f: Callable[..., Any]) -> None:
    """route traces f on its own: Haiku parameters and state created or updated
    there would be tracers of that trace stored in Haiku's frame (a leaked
    tracer at init or apply), so a routed function must not run inside one."""
    hk = sys.modules.get("haiku")
    if hk is None:
        return
    try:
        hk.running_init()
    except ValueError:
        return  # not inside a Haiku transform
    name = getattr(f, "__qualname__", repr(f))
    raise RuntimeError(
        f"route({name}) was called inside a Haiku transform: Haiku's parameters and state cannot "
        "cross route's trace. Transform the plain function and route its apply instead: "
        "net = hk.transform(f); params = net.init(rng, x); route(net.apply)(params, rng, x) "
        "(jax.grad(route(loss)) for a loss that calls net.apply)."
    )


class _Router:
    """Evaluates a jaxpr with its ``jax.nn.silu`` calls replaced by ``silu``."""

    def __init__(self) -> None:
        self._contains: dict[int, bool] = {}
        self._rewritten: dict[int, tuple[Any, Any]] = {}  # id -> (original, rewritten)

    def eval(self, jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any]) -> list[Any]:
        env: dict[Var, Any] = {}

        def read(v: Any) -> Any:
            return v.val if isinstance(v, Literal) else env[v]

        env.update(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, args))
        for eqn in jaxpr.eqns:
            invals = [read(v) for v in eqn.invars]
            if _is_silu(eqn) and _supported(eqn.invars[0].aval):
                outvals = [silu(invals[0])]
            else:
                outvals = _eval_eqn(self._rewrite_eqn(eqn), invals)
            for v, val in zip(eqn.outvars, outvals):
                if not isinstance(v, DropVar):
                    env[v] = val
        return [read(v) for v in jaxpr.outvars]

    def _contains_silu(self, jaxpr: Jaxpr) -> bool:
        """Whether rewriting ``jaxpr`` would replace anything."""
        key = id(jaxpr)
        if key not in self._contains:
            found = False
            for eqn in jaxpr.eqns:
                if _is_silu(eqn):
                    found = found or _supported(eqn.invars[0].aval)
                elif eqn.primitive.name in _REWRITTEN:
                    found = any(self._contains_silu(sub) for sub in _subjaxprs(eqn)) or found
            self._contains[key] = found
        return self._contains[key]

    def _rewrite_eqn(self, eqn: JaxprEqn) -> JaxprEqn:
        if eqn.primitive.name not in _REWRITTEN:
            return eqn
        if not any(self._contains_silu(sub) for sub in _subjaxprs(eqn)):
            return eqn
        return eqn.replace(params={k: self._rewrite_param(v) for k, v in eqn.params.items()})

    def _rewrite_param(self, value: Any) -> Any:
        if isinstance(value, (tuple, list)):
            return type(value)(self._rewrite_param(v) for v in value)
        if not isinstance(value, (ClosedJaxpr, Jaxpr)):
            return value
        key = id(value)
        if key not in self._rewritten:
            self._rewritten[key] = (value, self._rewrite_jaxpr(value))
        return self._rewritten[key][1]

    def _rewrite_jaxpr(self, value: Any) -> Any:
        """The same jaxpr (same binders and types) with its SiLU calls replaced."""
        jaxpr = value.jaxpr if isinstance(value, ClosedJaxpr) else value
        consts = list(getattr(value, "consts", ()))
        if not self._contains_silu(jaxpr):
            return value
        in_avals = [v.aval for v in jaxpr.invars]
        arrays = [a for a in in_avals if isinstance(a, jax.core.ShapedArray)]
        if len(arrays) != len(in_avals):
            return value  # tokens or references: leave the primitive as it is
        specs = [jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in arrays]
        new = jax.make_jaxpr(lambda *a: self.eval(jaxpr, consts, a))(*specs)
        if list(new.in_avals) != in_avals or list(new.out_avals) != [v.aval for v in jaxpr.outvars]:
            return value
        if isinstance(value, ClosedJaxpr):
            return new
        # An open jaxpr parameter (jax.checkpoint on jax 0.10) cannot take new constants.
        return value if new.consts else new.jaxpr


def _warn_if_differentiated(f: Callable[..., Any], jaxpr: Jaxpr) -> None:
    """Warns when f traces SiLU's derivative itself, which route cannot reach.
    Differentiating one jax.nn.silu call leaves one jit named 'silu' with
    several results (the forward pass with residuals, or a JVP's value and
    tangent) and, in reverse mode, a second one with several operands and
    one result (the backward pass): SiLU calls are counted by the first kind,
    or by the second when f only runs backward passes (a vjp function)."""
    calls = [
        (len(eqn.invars), len(eqn.outvars))
        for eqn in _walk(jaxpr)
        if eqn.primitive.name in _CALLS and eqn.params.get("name") == "silu"
    ]
    forward = sum(1 for _, n_out in calls if n_out > 1)
    backward = sum(1 for n_in, n_out in calls if n_in > 1 and n_out == 1)
    count = forward or backward
    if count:
        warnings.warn(
            f"route({getattr(f, '__qualname__', repr(f))}): {count} differentiated jax.nn.silu "
            "call(s) run unchanged: jax.grad or jax.vjp runs inside the routed function, which "
            "traces the SiLU backward before route sees it. Apply route to the function being "
            "differentiated instead.",
            stacklevel=3,
        )


def _walk(jaxpr: Jaxpr) -> Iterator[JaxprEqn]:
    """Every equation of jaxpr and of the inner jaxprs route rewrites."""
    for eqn in jaxpr.eqns:
        yield eqn
        if eqn.primitive.name in _REWRITTEN and not _is_silu(eqn):
            for sub in _subjaxprs(eqn):
                yield from _walk(sub)


def _subjaxprs(eqn: JaxprEqn) -> Iterator[Jaxpr]:
    """The jaxprs among an equation's parameters (jit bodies, scan/while
    bodies, cond branches, checkpointed functions)."""
    for value in eqn.params.values():
        for item in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(item, ClosedJaxpr):
                yield item.jaxpr
            elif isinstance(item, Jaxpr):
                yield item


def _eval_eqn(eqn: JaxprEqn, invals: Sequence[Any]) -> list[Any]:
    """Runs one equation through ``jax.core.eval_jaxpr``, which knows how each
    primitive wants its parameters bound."""
    operands: dict[Var, Any] = {}
    for v, val in zip(eqn.invars, invals):
        if not isinstance(v, Literal):
            operands[v] = val
    outvars = [v for v in eqn.outvars if not isinstance(v, DropVar)]
    info = DebugInfo("jax_ascend_silu.route", eqn.primitive.name, None, None)
    one = Jaxpr([], list(operands), outvars, [eqn], eqn.effects, info)
    results = iter(jax.core.eval_jaxpr(one, [], *operands.values()))
    return [None if isinstance(v, DropVar) else next(results) for v in eqn.outvars]
