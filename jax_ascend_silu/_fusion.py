"""Which ``silu(a) * b`` of a traced program ``route`` fuses into one SwiGLU.

``route`` reads each jaxpr it rewrites; this module finds, in one jaxpr, the
SwiGLUs as programs trace them and decides whether fusing keeps the values:

- from ``jax.nn.silu``'s result, a chain of equations each the only use of
  the one before: casts between floating dtypes, ``name`` tags
  (``checkpoint_name``), data movement that commutes with an elementwise
  function (``broadcast_in_dim``, ``reshape``, ``squeeze``, ``expand_dims``,
  ``transpose``, ``copy``), ending in a ``mul`` by another array, in either
  operand position (``functools.reduce(operator.mul, ...)`` is that ``mul``);
- optionally one narrowing cast of the product (MaxText's ``.astype(dtype)``);
- both factors carry a gradient (``carries_gradient``): a product by a dropout
  mask, a constant or a ``stop_gradient`` value is no SwiGLU;
- the fused operation takes the operands at the narrowest dtype that holds
  both exactly (casts that widen a value are undone: keras-hub's
  ``cast(gate, float32)``) and that holds the result's dtype;
- the halves of one array, by ``jnp.split`` or slices along an axis (with the
  same squeeze or reshape on both, MaxText's ``x[:, :, idx, ...]``), become
  the packed ``swiglu(x, axis)``: x alone is kept for the backward pass.

Values: the fused operation computes ``silu(a) * b`` in float32 and rounds once
to its dtype; the program rounds silu's result (and every cast) on the way.
Fusing is done only where each of the program's roundings is to a dtype that
holds the result's, so the two differ by the double rounding, one ulp of the
result's dtype (plus, where the program computes silu in that dtype, its own
error there). A silu rounded to a narrower dtype before a wider product
(bfloat16 silu, float32 product) is left to SiluGrad, as are the patterns in
``Plan.unfused``' reasons.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax.extend import source_info_util
from jax.extend.core import Jaxpr, JaxprEqn, Literal, Var

from .operands import SUPPORTED_DTYPES, spec_of

#: Equations on the way from silu's result to the product that commute with an
#: elementwise function: the fused operation applies them to its gate operand.
MOVES = frozenset({"broadcast_in_dim", "reshape", "squeeze", "expand_dims", "transpose", "copy", "copy_p"})
#: Between the halves of a packed array and silu or the product: the same on both halves.
HALF_MOVES = frozenset({"squeeze", "reshape"})


def holds(wide: Any, narrow: Any) -> bool:
    """Whether every value of floating dtype ``narrow`` is one of dtype ``wide``
    (float32 holds bfloat16 and float16; neither half type holds the other)."""
    wide, narrow = np.dtype(wide), np.dtype(narrow)
    if wide == narrow:
        return True
    if not (jnp.issubdtype(wide, jnp.floating) and jnp.issubdtype(narrow, jnp.floating)):
        return False
    w, n = jnp.finfo(wide), jnp.finfo(narrow)
    return bool(w.nmant >= n.nmant and w.maxexp >= n.maxexp and w.minexp <= n.minexp)


def _aval(v: Any) -> Any:
    """A variable's abstract value (a ShapedArray for the arrays matched here)."""
    return v.aval


def dtype_of(v: Any) -> np.dtype:
    return np.dtype(_aval(v).dtype)


def _is_cast(eqn: JaxprEqn) -> bool:
    return (eqn.primitive.name == "convert_element_type"
            and jnp.issubdtype(dtype_of(eqn.invars[0]), jnp.floating)
            and jnp.issubdtype(dtype_of(eqn.outvars[0]), jnp.floating))


@dataclasses.dataclass(frozen=True)
class Fusion:
    """One SwiGLU: what the fused operation reads and which variable it defines."""

    gate: Var  # the silu's operand, or a narrower value it was cast from
    up: Var  # the product's other operand, or a narrower value it was cast from
    moves: tuple[JaxprEqn, ...]  # the data movement and tags between silu and the product, applied to the gate
    dtype: np.dtype  # the fused operation's dtype
    out: Var  # the product (or its narrowing cast)
    packed: tuple[Var, int, tuple[JaxprEqn, ...]] | None  # (x, axis, moves after the halves), or None


@dataclasses.dataclass
class Plan:
    """What route does with one jaxpr: the fusions, keyed by the index of the
    equation where the fused operation is computed (the product), and the
    equations it makes unneeded (silu, the chain, the product's cast)."""

    fusions: dict[int, Fusion] = dataclasses.field(default_factory=dict)
    skip: set[int] = dataclasses.field(default_factory=set)
    unfused: list[str] = dataclasses.field(default_factory=list)


def _is_float(v: Any) -> bool:
    dtype = getattr(_aval(v), "dtype", None)  # tokens have none; PRNG keys' is no NumPy dtype
    return dtype is not None and bool(jnp.issubdtype(dtype, jnp.floating))


def carries_gradient(jaxpr: Jaxpr) -> set[Var]:
    """The floating-point variables of ``jaxpr`` that depend on its floating
    inputs (arguments or closed-over constants) through floating-point values
    alone, not through stop_gradient: those a gradient can reach. A dropout
    mask (random bits, a comparison, a cast of booleans) or an iota is not one."""
    live = {v for v in [*jaxpr.invars, *jaxpr.constvars] if _is_float(v)}
    for eqn in jaxpr.eqns:
        if eqn.primitive.name != "stop_gradient" and any(isinstance(v, Var) and v in live for v in eqn.invars):
            live.update(v for v in eqn.outvars if isinstance(v, Var) and _is_float(v))
    return live


def plan(jaxpr: Jaxpr, is_silu: Callable[[JaxprEqn], bool]) -> Plan:
    """The SwiGLUs in ``jaxpr`` (``is_silu``: a routed jax.nn.silu call) and why others were left."""
    eqns, outvars = jaxpr.eqns, jaxpr.outvars
    uses: dict[Var, list[int]] = {}
    producer: dict[Var, int] = {}
    live: set[Var] | None = None  # carries_gradient(jaxpr), when a silu is found
    for i, eqn in enumerate(eqns):
        for v in eqn.invars:
            if isinstance(v, Var):
                uses.setdefault(v, []).append(i)
        for v in eqn.outvars:
            producer[v] = i
    for v in outvars:
        if isinstance(v, Var):
            uses.setdefault(v, []).append(-1)  # a result of the jaxpr
    result = Plan()
    for i, eqn in enumerate(eqns):
        if is_silu(eqn):
            live = carries_gradient(jaxpr) if live is None else live
            found = _Match(eqns, uses, producer, live).fuse(i)
            if isinstance(found, str):
                if found:
                    result.unfused.append(f"{source_info_util.summarize(eqn.source_info)}: {found}")
                continue
            at, fusion, skip = found
            if at in result.fusions:
                continue  # silu(a) * silu(b): b's silu is the up operand of a's fusion
            result.fusions[at] = fusion
            result.skip.update(skip)
    return result


class _Match:
    def __init__(self, eqns: Sequence[JaxprEqn], uses: dict[Var, list[int]], producer: dict[Var, int],
                 live: set[Var]) -> None:
        self.eqns, self.uses, self.producer, self.live = eqns, uses, producer, live

    def _only_use(self, v: Var) -> JaxprEqn | None:
        used = self.uses.get(v, [])
        return self.eqns[used[0]] if len(used) == 1 and used[0] >= 0 else None

    def _made_by(self, v: Any) -> JaxprEqn | None:
        i = self.producer.get(v) if isinstance(v, Var) else None
        return None if i is None else self.eqns[i]

    def _reaches_product(self, v: Var, depth: int = 8) -> bool:
        """Whether some use of v leads to a mul through data movement, casts,
        tags or stop_gradient: the pattern looks like a SwiGLU."""
        if depth == 0:
            return False
        for i in self.uses.get(v, []):
            if i < 0:
                continue
            eqn = self.eqns[i]
            name = eqn.primitive.name
            if name == "mul":
                return True
            if name in MOVES or name in ("name", "stop_gradient") or _is_cast(eqn):
                if self._reaches_product(eqn.outvars[0], depth - 1):
                    return True
        return False

    def fuse(self, at: int) -> tuple[int, Fusion, set[int]] | str:
        """The fusion of the silu equation ``eqns[at]``, or why there is none
        ("" when it does not look like a SwiGLU at all)."""
        silu = self.eqns[at]
        a, v = silu.invars[0], silu.outvars[0]
        skip, roundings = {at}, [dtype_of(v)]
        chain: list[JaxprEqn] = []
        while True:
            used = self.uses.get(v, [])
            if len(used) != 1 or used[0] < 0:
                if self._reaches_product(v):
                    return (f"silu's result{' (after casts or moves)' if chain else ''} is used "
                            f"{'as a result of the traced function and ' if -1 in used else ''}more than once; "
                            "fusing would drop the value its other uses read, so it is left to SiluGrad")
                return ""
            eqn = self.eqns[used[0]]
            name = eqn.primitive.name
            if name == "mul":
                break
            if name == "stop_gradient" and self._reaches_product(eqn.outvars[0]):
                return "silu's result reaches the product through stop_gradient: no gradient flows through it"
            if not (name in MOVES or name == "name" or _is_cast(eqn)):
                return ""
            if _is_cast(eqn):
                roundings.append(dtype_of(eqn.outvars[0]))
            chain.append(eqn)
            skip.add(used[0])
            v = eqn.outvars[0]
        mul_at = used[0]
        mul = self.eqns[mul_at]
        if mul.invars[0] is v and mul.invars[1] is v:
            return "silu's result multiplies itself"
        up = mul.invars[1] if mul.invars[0] is v else mul.invars[0]
        if isinstance(up, Literal):
            return "the other factor of the product is a constant, not an array the gradient reaches"
        made = self._made_by(up)
        if made is not None and made.primitive.name == "stop_gradient":
            return "the other factor of the product is under stop_gradient: no gradient flows to it"
        # A product by a dropout mask or a constant is no SwiGLU: the fused call would compute a
        # gradient for a factor that takes none, and keep it for the backward pass.
        for name, operand in (("the other factor of the product", up), ("silu's operand", a)):
            if operand not in self.live:
                return (f"{name} carries no gradient (it does not depend on the differentiated inputs through "
                        "floating-point values: a dropout mask, a constant)")
        if _aval(up).shape != _aval(mul.outvars[0]).shape and _aval(v).shape != _aval(mul.outvars[0]).shape:
            # Both operands broadcast: the fused operation would keep both at the product's size.
            return "both factors broadcast to the product's shape; silu_mul would keep both at the product's size"
        out, observed = mul.outvars[0], dtype_of(mul.outvars[0])
        roundings.append(observed)
        cast = self._only_use(out)
        if cast is not None and _is_cast(cast) and holds(observed, dtype_of(cast.outvars[0])):
            out, observed = cast.outvars[0], dtype_of(cast.outvars[0])
            skip.add(self.uses[mul.outvars[0]][0])
        narrower = [d for d in roundings if not holds(d, observed)]
        if narrower:
            return (f"silu's result is rounded to {narrower[0].name} before the {observed.name} product; the fused "
                    "operation rounds once, which would change the values by more than one "
                    f"{observed.name} ulp, so it is left to SiluGrad")
        gates, ups = self._sources(a), self._sources(up)
        for dtype in sorted(SUPPORTED_DTYPES, key=lambda d: d.itemsize):
            gate = next((g for g in gates if holds(dtype, dtype_of(g))), None)
            other = next((u for u in ups if holds(dtype, dtype_of(u))), None)
            if holds(dtype, observed) and gate is not None and other is not None:
                break
        else:
            return (f"the operands ({dtype_of(a).name}, {dtype_of(up).name}) and the result ({observed.name}) have "
                    "no common dtype the fused operation takes")
        moves = tuple(e for e in chain if not _is_cast(e))
        packed = None if moves or _aval(up).shape != _aval(out).shape else self._packed(gate, other)
        return mul_at, Fusion(gate, other, moves, dtype, out, packed), skip

    def _sources(self, v: Any) -> list[Any]:
        """v, then the narrower values it was exactly widened from, narrowest first."""
        found = [v]
        while (eqn := self._made_by(found[-1])) is not None and _is_cast(eqn) and holds(
                dtype_of(eqn.outvars[0]), dtype_of(eqn.invars[0])) and isinstance(eqn.invars[0], Var):
            found.append(eqn.invars[0])
        return found[::-1]

    def _half(self, v: Var) -> tuple[tuple[JaxprEqn, ...], Var, int, int] | None:
        """(moves, x, axis, which) when v is half ``which`` of x along ``axis``
        (split or slice), after the moves in HALF_MOVES."""
        moves: list[JaxprEqn] = []
        while (eqn := self._made_by(v)) is not None and eqn.primitive.name in HALF_MOVES:
            moves.append(eqn)
            v = eqn.invars[0]  # type: ignore[assignment]  # a Literal has no producer: the loop ends
        eqn = self._made_by(v)
        if eqn is None or not isinstance(eqn.invars[0], Var):
            return None
        x = eqn.invars[0]
        shape = tuple(_aval(x).shape)
        if eqn.primitive.name == "split" and len(eqn.outvars) == 2:
            axis = eqn.params["axis"]
            sizes = tuple(int(s) for s in eqn.params["sizes"])
            if sizes[0] == sizes[1]:
                return tuple(moves[::-1]), x, axis, list(eqn.outvars).index(v)
        if eqn.primitive.name == "slice" and eqn.params.get("strides") in (None, (1,) * len(shape)):
            start, limit = eqn.params["start_indices"], eqn.params["limit_indices"]
            cut = [k for k in range(len(shape)) if (start[k], limit[k]) != (0, shape[k])]
            if len(cut) == 1:
                k = cut[0]
                n = shape[k] // 2
                if shape[k] % 2 == 0 and (start[k], limit[k]) in ((0, n), (n, 2 * n)):
                    return tuple(moves[::-1]), x, k, int(start[k] == n)
        return None

    def _packed(self, gate: Var, up: Var) -> tuple[Var, int, tuple[JaxprEqn, ...]] | None:
        """(x, axis, moves) when gate and up are the first and second halves of one x."""
        first, second = self._half(gate), self._half(up)
        if first is None or second is None:
            return None
        (moves, x, axis, which), (moves2, x2, axis2, which2) = first, second
        same_moves = len(moves) == len(moves2) and all(
            m.primitive is n.primitive and m.params == n.params for m, n in zip(moves, moves2))
        if x is not x2 or axis != axis2 or (which, which2) != (0, 1) or not same_moves:
            return None
        if spec_of(_aval(x).sharding, len(_aval(x).shape))[axis] is not None:
            return None  # the halves lie on different devices: the pair form, per shard
        return x, axis, moves
