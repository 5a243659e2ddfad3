"""``route(f)``: run code you don't own with its SiLU backward pass through SiluGrad, SwiGLUs fused.

``jax.nn.silu`` (also reached as ``jax.nn.swish``, ``flax.linen.silu``,
``flax.nnx.silu``) is a jitted function named ``silu``, so in a jaxpr every
call of it is a ``jit`` (``pjit`` on older jax) equation with ``name='silu'``
whose body is ``x * logistic(x)``. ``route`` traces ``f`` to a jaxpr and
evaluates it again, replacing each such equation by ``jax_ascend_silu.silu``
(same forward values; backward through the custom call). Calls nested in
``jax.jit``, ``lax.scan``/``map``/``fori_loop``/``while_loop``, ``lax.cond``/``switch``
and ``jax.checkpoint`` are rewritten in place, keeping those primitives and
their parameters.

SwiGLU: where silu's result is multiplied elementwise by another array (through
casts, ``checkpoint_name`` tags and broadcasting, either operand order, halves
of one array), the silu and the product are evaluated as one ``silu_mul`` (or
the packed ``swiglu``), whose backward pass is one SwiGluGrad call; ``_fusion``
finds these and decides where fusing keeps the values. ``route_report`` says
what was fused and why a SwiGLU-like pattern was not.

Left as they are, on purpose:
- SiLU in dtypes the kernel does not take (float64);
- SiLU inside a ``jax.custom_jvp``/``jax.custom_vjp`` function (its own
  derivative rule stays in charge) or inside ``shard_map``/``pmap`` bodies;
- SiLU that ``f`` already differentiates itself (``jax.grad`` inside ``f``):
  apply ``route`` to the function being differentiated (a warning says so).

Flax NNX graph nodes among the arguments (modules, ``nnx.Rngs``, Variables,
anywhere in a pytree) are split into a graph definition and state before the
trace and merged back into the same objects after it, as NNX's own transforms
do, so state ``f`` changes in place (Dropout RNG counts, BatchNorm statistics)
is kept. Only the nodes ``f`` changed are written back: one it left as it was,
such as the ``nnx.State`` that NNX's functional API merges into a copy inside
``f``, is not touched. ``flax`` is never imported here: only where
``flax.nnx`` already is can an argument be a graph node.

Refused: a routed function called inside a Haiku transform, whose parameters
and state cannot cross route's own trace (route the transformed ``apply``),
and one that changes an NNX module it closes over (pass it as an argument).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import jax
import numpy as np
from jax.extend.core import ClosedJaxpr, DebugInfo, DropVar, Jaxpr, JaxprEqn, Literal, Var

from . import _fusion
from .activation import silu
from .operands import kernel_takes
from .swiglu import silu_mul, swiglu

F = TypeVar("F", bound=Callable[..., Any])

#: Primitives whose inner jaxprs ``route`` rewrites (names across jax 0.10-0.12).
_CALLS = frozenset({"jit", "pjit", "closed_call", "core_call"})
_REWRITTEN = _CALLS | {"scan", "while", "cond", "remat2", "checkpoint"}


def route(f: F) -> F:
    """Runs ``f`` with every ``jax.nn.silu`` call in it differentiated by SiluGrad,
    and each SwiGLU (``silu(a) * b``) fused into one operation.

    A ``jax.nn.silu`` call whose result is multiplied elementwise by another
    array (either order; through casts, ``checkpoint_name`` tags and
    broadcasting; ``jnp.split`` or sliced halves of one array) becomes one
    ``silu_mul`` (or ``swiglu``) whose backward pass is one SwiGluGrad call
    keeping only its operands; its value is ``silu(a) * b`` rounded once, within
    an ulp of the program's where the program computes silu in float32, and
    no farther from the program's value than the program's own half-precision
    silu error otherwise. ``route_report(f)(*args)`` says what was fused and why
    a SwiGLU-like pattern was left to SiluGrad.

    ``f`` itself is not modified and nothing global is patched: ``route(f)``
    is a new function with the same signature, inputs and outputs (any
    pytrees) and the same forward values. Differentiate it as usual, e.g.
    ``jax.grad(route(loss))``; it composes with :func:`jax.jit` (including
    ``static_argnums``), :func:`jax.vmap` and :func:`jax.value_and_grad`.

    Array arguments (``jax.Array``, NumPy arrays and scalars) are traced, as
    under ``jax.jit``; every other leaf (Python numbers, strings, ``None``,
    callables) is passed to ``f`` unchanged, so Python control flow on it
    works as in ``f``. Flax NNX modules, ``nnx.Rngs`` and Variables passed
    (or returned) keep what ``f`` does to them, as in an unrouted call.

    Raises:
      TypeError: ``f`` is not callable.
      RuntimeError: when the routed function is called inside a Haiku
        transform (``hk.transform``); route ``net.apply`` instead. When it
        changes a Flax NNX module it closes over; pass the module instead.

    Examples:
      >>> import jax
      >>> import jax.numpy as jnp
      >>> import jax_ascend_silu as jas
      >>> def loss(w, x):  # code you do not own, calling jax.nn.silu
      ...     return jax.nn.silu(x @ w).sum()
      >>> w, x = jnp.eye(3, dtype=jnp.float32), jnp.ones((2, 3), jnp.float32)
      >>> step = jax.jit(jax.grad(jas.route(loss)))
      >>> "jax_ascend_silu_silu_grad" in step.lower(w, x).as_text()  # the custom call is in the program
      True
    """
    if not callable(f):
        raise TypeError(f"route: expected the function to route, got {type(f).__name__} {f!r}")

    @functools.wraps(f)
    def routed(*args: Any, **kwargs: Any) -> Any:
        return _run(f, args, kwargs, None)

    return routed  # type: ignore[return-value]


@dataclasses.dataclass(frozen=True)
class RouteReport:
    """What ``route`` does to a function at given arguments (``route_report``).

    Counts are of sites in the traced program, as XLA compiles it: a body of
    ``lax.scan`` or ``jax.checkpoint`` counts once however often it runs, each
    call of a jitted function (and each ``lax.cond`` branch) on its own.

    Attributes:
      swiglu: ``silu(a) * b`` products fused into one SwiGLU operation (one
        ``jax_ascend_silu_swiglu_grad`` call each in the backward pass).
      packed: of those, the ones on two halves of one array (``jnp.split``,
        slices), fused as the packed ``swiglu(x, axis)``.
      silu: ``jax.nn.silu`` calls routed on their own (a SiluGrad call each).
      unfused: for each pattern that looked like a SwiGLU but was not fused,
        where it is and why; its silu is among ``silu``.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> import jax_ascend_silu as jas
      >>> def f(x, w):
      ...     s = jax.nn.silu(x @ w)
      ...     return s * x + s  # silu's result is used twice: no SwiGLU to fuse
      >>> report = jas.route_report(f)(jnp.ones((2, 4)), jnp.ones((4, 4)))
      >>> report.swiglu, report.silu, len(report.unfused)
      (0, 1, 1)
      >>> "used more than once" in report.unfused[0]
      True
    """

    swiglu: int = 0
    packed: int = 0
    silu: int = 0
    unfused: tuple[str, ...] = ()

    def __add__(self, other: RouteReport) -> RouteReport:
        return RouteReport(self.swiglu + other.swiglu, self.packed + other.packed, self.silu + other.silu,
                           self.unfused + other.unfused)


def route_report(f: Callable[..., Any]) -> Callable[..., RouteReport]:
    """What ``route(f)`` does when called with these arguments, without running it.

    ``route_report(f)(*args, **kwargs)`` traces ``f`` as ``route(f)(*args,
    **kwargs)`` would (as ``jax.make_jaxpr`` does: nothing is computed, Flax NNX
    arguments are left as they are) and returns a ``RouteReport``: how many
    SwiGLUs were fused, how many plain SiLUs go to SiluGrad, and why each
    SwiGLU-like pattern left alone was. Each call traces anew, so it is safe
    from any thread.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> import jax_ascend_silu as jas
      >>> def ffn(x, w_gate, w_up):
      ...     return jax.nn.silu(x @ w_gate) * (x @ w_up)
      >>> x, w = jnp.ones((4, 8)), jnp.ones((8, 16))
      >>> jas.route_report(ffn)(x, w, w)
      RouteReport(swiglu=1, packed=0, silu=0, unfused=())
    """
    if not callable(f):
        raise TypeError(f"route_report: expected the function to route, got {type(f).__name__} {f!r}")

    @functools.wraps(f)
    def report(*args: Any, **kwargs: Any) -> RouteReport:
        return _run(f, args, kwargs, RouteReport())

    return report


def _run(f: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], report: RouteReport | None) -> Any:
    """route(f)(*args, **kwargs); with ``report`` given, the RouteReport of it instead (traced, not run)."""
    _refuse_inside_haiku(f)
    nodes = _GraphNodes(f)
    leaves, treedef = jax.tree.flatten((args, kwargs), is_leaf=nodes.is_node)
    with nodes.carry(leaves) as inputs:
        traced = [i for i, leaf in enumerate(inputs) if _is_array(leaf)]
        numbers: list[bool] = []  # which results f returned as Python numbers

        def flat_f(*arrays: Any) -> list[Any]:
            full = list(inputs)
            for i, a in zip(traced, arrays):
                full[i] = a
            f_args, f_kwargs = jax.tree.unflatten(treedef, nodes.merge_inputs(full))
            out = f(*f_args, **f_kwargs)
            with_paths, nodes.out_tree = jax.tree_util.tree_flatten_with_path(out, is_leaf=nodes.is_node)
            _check_outputs(f, with_paths, nodes.is_node)
            results = nodes.split_outputs([leaf for _, leaf in with_paths])
            numbers[:] = [type(leaf) in (bool, int, float, complex) for leaf in results]
            return results

        arrays = [inputs[i] for i in traced]
        # Traced with jit on even under jax.disable_jit(): jax.nn.silu is only
        # recognisable as the jit call it is; the rewritten jaxpr is then
        # evaluated under the caller's setting.
        with jax.disable_jit(False), nodes.explain_trace_errors():
            closed = jax.make_jaxpr(flat_f)(*arrays)
        _warn_if_differentiated(f, closed.jaxpr)
        router = _Router()
        if report is not None:
            # Evaluated abstractly, as make_jaxpr does: no values, and NNX arguments left as passed.
            jax.make_jaxpr(lambda *a: router.eval(closed.jaxpr, closed.consts, a))(*arrays)
            return report + router.report
        results = router.eval(closed.jaxpr, closed.consts, arrays)
        out = [_plain(v) if number else _array(v, aval)
               for v, number, aval in zip(results, numbers, closed.out_avals)]
        return jax.tree.unflatten(nodes.out_tree, nodes.merge_outputs(out))


def _check_outputs(f: Callable[..., Any], with_paths: list[tuple[Any, Any]], is_node: Callable[[Any], bool]) -> None:
    """A TypeError naming route and f when an output is neither an array, a number nor an NNX graph node."""
    for path, leaf in with_paths:
        if not isinstance(leaf, (jax.Array, np.ndarray, np.generic, bool, int, float, complex)) and not is_node(leaf):
            raise TypeError(
                f"route({_name(f)}): the routed function returned "
                f"{type(leaf).__name__} {leaf!r} at output{jax.tree_util.keystr(path) or ''}; a routed "
                "function must return arrays or numbers (in any pytree)")


def _name(f: Callable[..., Any]) -> str:
    return getattr(f, "__qualname__", repr(f))


class _GraphNodes:
    """Flax NNX graph nodes (modules, ``nnx.Rngs``, ``nnx.Variable``, optimizers)
    among a routed call's arguments and results, carried across route's trace as
    NNX's own transforms carry them: split into a graph definition and state
    before, merged inside, split again after ``f`` ran, and merged back into the
    very objects passed, so that what ``f`` changes in place (RNG counts, batch
    statistics, any Variable, even attributes added) is there after the call as
    it would be without route. Without ``flax.nnx`` imported nothing is a node.

    Only argument nodes that ``f`` changed are written back. NNX lets a Variable
    be set only at the JAX trace level it was made at, and an argument a JAX
    transform passes on as it is (one of ``jax.grad``'s non-differentiated
    arguments) belongs to the caller's level: unrouted, ``f`` may read it there
    but not change it, so writing its unchanged state back would fail where
    ``f`` alone runs."""

    _tags = itertools.count()

    def __init__(self, f: Callable[..., Any]) -> None:
        self._f = f
        self._nnx: Any = sys.modules.get("flax.nnx")
        self._tag = f"jax_ascend_silu.route.{next(self._tags)}"
        self._at: list[int] = []  # where the argument leaves were graph nodes
        self._n_leaves = 0
        self._outer: list[Any] = []  # the argument nodes, as passed
        self._inner: Any = None  # the argument nodes as f sees them, inside the trace
        self._before: list[Any] = []  # what each of them held when f got it
        self._record: Any = None  # how to put f's results (and the nodes' new state) back together
        self.out_tree: Any = None

    def is_node(self, x: Any) -> bool:
        return self._nnx is not None and self._nnx.graph.is_graph_node(x)

    @contextlib.contextmanager
    def carry(self, leaves: list[Any]) -> Iterator[list[Any]]:
        """The argument leaves with each graph node replaced by None and the
        leaves of their state appended, inside NNX's update context when there are nodes."""
        self._at = [i for i, leaf in enumerate(leaves) if self.is_node(leaf)]
        self._outer = [leaves[i] for i in self._at]
        self._n_leaves = len(leaves)
        if self._nnx is None:
            yield list(leaves)
            return
        nnx = self._nnx
        # Entered even without node arguments: f may return nodes it creates.
        with nnx.update_context(self._tag):
            if not self._at:
                yield list(leaves)
                return
            with nnx.split_context(self._tag) as ctx:
                self._graphdef, state = ctx.split(tuple(leaves[i] for i in self._at))
            state_leaves, self._state_tree = jax.tree.flatten(state)
            plain = [None if i in self._at else leaf for i, leaf in enumerate(leaves)]
            yield plain + state_leaves

    def merge_inputs(self, full: list[Any]) -> list[Any]:
        """Inside the trace: the argument leaves, graph nodes rebuilt from their (traced) state."""
        leaves = full[: self._n_leaves]
        if not self._at:
            return leaves
        with self._nnx.merge_context(self._tag, True) as ctx:
            self._inner = ctx.merge(self._graphdef, jax.tree.unflatten(self._state_tree, full[self._n_leaves :]))
        self._before = [self._contents(node) for node in self._inner]
        for i, node in zip(self._at, self._inner):
            leaves[i] = node
        return leaves

    def _contents(self, node: Any) -> tuple[Any, list[tuple[Any, Any, Any]]]:
        """A node's graph structure and each Variable in it with its value and metadata."""
        variables = [v for _, v in self._nnx.iter_graph(node) if isinstance(v, self._nnx.Variable)]
        return self._nnx.graphdef(node), [(v, v.get_raw_value(), v.get_metadata()) for v in variables]

    def _unchanged(self, node: Any, before: tuple[Any, list[tuple[Any, Any, Any]]]) -> bool:
        """Whether f left the argument node as it got it: the same structure, Variables and values."""
        graphdef, variables = self._contents(node)
        return graphdef == before[0] and len(variables) == len(before[1]) and all(
            v is v0 and value is value0 and metadata == metadata0
            for (v, value, metadata), (v0, value0, metadata0) in zip(variables, before[1]))

    def split_outputs(self, out: list[Any]) -> list[Any]:
        """Inside the trace: f's result leaves with graph nodes taken out, followed by
        the array state of the argument nodes f changed and of the result nodes (the
        jaxpr's results)."""
        inner = list(self._inner or ())
        kept = [self._unchanged(node, before) for node, before in zip(inner, self._before)]
        self._before = []
        changed = tuple(node for node, same in zip(inner, kept) if not same)
        # An unchanged argument node that f returns is handed back as the object passed, not written to.
        passed = {id(node): outer for node, outer, same in zip(inner, self._outer, kept) if same}
        returned = {i: passed[id(leaf)] for i, leaf in enumerate(out) if id(leaf) in passed}
        at = [i for i, leaf in enumerate(out) if self.is_node(leaf) and i not in returned]
        plain = [leaf for i, leaf in enumerate(out) if i not in at and i not in returned]
        if not changed and not at:
            self._record = (len(out), at, returned, None, None, [], []) if returned else None
            return plain
        with self._nnx.split_context(self._tag) as ctx:
            graphdef, state = ctx.split((changed, tuple(out[i] for i in at)))
        state_leaves, state_tree = jax.tree.flatten(state)
        # Non-array state (a Python number in a Variable) is set at trace time and kept as it is.
        dynamic = [i for i, leaf in enumerate(state_leaves) if _is_array(leaf)]
        self._record = (len(out), at, returned, graphdef, state_tree, state_leaves, dynamic)
        return plain + [state_leaves[i] for i in dynamic]

    def merge_outputs(self, values: list[Any]) -> list[Any]:
        """After the trace: f's result leaves, the argument nodes updated in place
        and result nodes rebuilt (the argument objects themselves where f returned them)."""
        if self._record is None:
            return values
        n_out, at, returned, graphdef, state_tree, state_leaves, dynamic = self._record
        n_plain = n_out - len(at) - len(returned)
        out_nodes: Sequence[Any] = ()
        if graphdef is not None:
            state_leaves = list(state_leaves)
            for i, value in zip(dynamic, values[n_plain:]):
                state_leaves[i] = value
            with self._nnx.merge_context(self._tag, False) as ctx:
                _, out_nodes = ctx.merge(graphdef, jax.tree.unflatten(state_tree, state_leaves))
        plain, nodes = iter(values[:n_plain]), iter(out_nodes)
        return [returned[i] if i in returned else next(nodes) if i in at else next(plain) for i in range(n_out)]

    @contextlib.contextmanager
    def explain_trace_errors(self) -> Iterator[None]:
        """NNX refuses to change, inside route's trace, a module that f closes over:
        say which argument to pass instead."""
        errors = sys.modules.get("flax.errors")
        if errors is None:
            yield
            return
        try:
            yield
        except errors.TraceContextError as err:
            raise RuntimeError(
                f"route({_name(self._f)}): the routed function changes a Flax NNX object that it does not "
                f"take as an argument ({err}). route carries the state of NNX modules, nnx.Rngs and "
                "Variables passed as arguments (anywhere in a pytree) and writes it back after the call; "
                "pass the module to the routed function instead of closing over it: "
                "route(loss)(model, x) with loss(model, x)."
            ) from err


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


def _array(value: Any, aval: Any) -> Any:
    """An array f returned, as an array: a constant one is a literal in the jaxpr,
    which holds it as a Python or NumPy scalar."""
    if isinstance(value, (jax.Array, np.ndarray)):
        return value
    return jax.numpy.asarray(value, dtype=aval.dtype)


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


def _routed(eqn: JaxprEqn) -> bool:
    """Whether route replaces ``eqn``: a jax.nn.silu call on an operand the kernel takes."""
    return _is_silu(eqn) and _supported(eqn.invars[0].aval)


def _fused(fusion: _fusion.Fusion, read: Callable[[Any], Any]) -> Any:
    """The value of ``fusion.out`` by one SwiGLU operation in ``fusion.dtype``:
    the operands cast to it (exactly: they are narrower or of it), the moves
    between silu and the product applied to the gate (they commute with silu),
    the result cast to the product's (or its cast's) dtype."""
    dtype = fusion.dtype
    if fusion.packed is not None:
        x, axis, moves = fusion.packed
        out = swiglu(jax.numpy.asarray(read(x)).astype(dtype), axis)
    else:
        gate = jax.numpy.asarray(read(fusion.gate)).astype(dtype)
        for move in fusion.moves:
            (gate,) = _eval_eqn(move, [gate])
        out, moves = silu_mul(gate, jax.numpy.asarray(read(fusion.up)).astype(dtype)), ()
    for move in moves:
        (out,) = _eval_eqn(move, [out])
    return out.astype(_fusion.dtype_of(fusion.out))


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
    raise RuntimeError(
        f"route({_name(f)}) was called inside a Haiku transform: Haiku's parameters and state cannot "
        "cross route's trace. Transform the plain function and route its apply instead: "
        "net = hk.transform(f); params = net.init(rng, x); route(net.apply)(params, rng, x) "
        "(jax.grad(route(loss)) for a loss that calls net.apply)."
    )


class _Router:
    """Evaluates a jaxpr with its ``jax.nn.silu`` calls replaced by ``silu``,
    and each ``silu(a) * b`` that ``_fusion`` finds by one SwiGLU operation;
    ``report`` counts what it replaced."""

    def __init__(self) -> None:
        self._contains: dict[int, bool] = {}
        self._rewritten: dict[int, tuple[Any, Any, RouteReport]] = {}  # id -> (original, rewritten, its report)
        self.report = RouteReport()

    def eval(self, jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any]) -> list[Any]:
        env: dict[Var, Any] = {}

        def read(v: Any) -> Any:
            return v.val if isinstance(v, Literal) else env[v]

        env.update(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, args))
        plan = _fusion.plan(jaxpr, _routed)
        packed = sum(1 for fusion in plan.fusions.values() if fusion.packed is not None)
        self.report += RouteReport(len(plan.fusions), packed, 0, tuple(plan.unfused))
        for i, eqn in enumerate(jaxpr.eqns):
            if i in plan.skip:
                continue  # silu, the casts and moves after it, the product's cast: computed by the fusion
            fusion = plan.fusions.get(i)
            if fusion is not None:
                env[fusion.out] = _fused(fusion, read)
                continue
            invals = [read(v) for v in eqn.invars]
            if _routed(eqn):
                self.report += RouteReport(silu=1)
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
            outer, self.report = self.report, RouteReport()
            try:
                new = self._rewrite_jaxpr(value)
                self._rewritten[key] = (value, new, self.report if new is not value else RouteReport())
            finally:
                self.report = outer
        _, new, report = self._rewritten[key]
        self.report += report  # each site the jaxpr is used at is a site in the program
        return new

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
            f"route({_name(f)}): {count} differentiated jax.nn.silu "
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
