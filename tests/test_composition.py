"""The package composes as jax.nn.silu does: entry point x transformation x
config x dtype, each cell one program run twice, with the package and with
the native equivalent, required to end the same way.

- Entry points: ``silu`` and ``route(jax.nn.silu)`` against ``jax.nn.silu``;
  ``silu_grad`` and ``silu_grad_p.bind`` against SiluGrad's formula in jnp;
  ``swiglu`` and ``silu_mul`` against ``jax.nn.silu(a) * b``, and
  ``swiglu_grad``, ``silu_mul_grad`` and ``swiglu_grad_p.bind`` against
  SwiGluGrad's formula in jnp (each shaped as x, so every transformation applies).
- The same way: both return trees of the same structure, dtypes and shapes
  with values within the dtype's tolerance (NaN where the other has NaN;
  where JAX's autodiff gives NaN at x = +-inf the package gives the limits, as
  documented), or both raise the same exception type.
- Each run starts in a fresh thread: JAX's config contexts are per thread,
  and so is the state that its ``debug_nans(False)`` contexts leave behind
  (``op.py`` shows the JAX bug), so no earlier test can mask a cell.

A cell the package cannot match is listed in ``EXCEPTIONS`` with its reason
and runs as a strict xfail: it fails the suite the day it starts to match.
"""

from __future__ import annotations

import contextlib
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

import jax_ascend_silu as jas
from checks import HLO_CALL
from jax_ascend_silu._ffi import SWIGLU_TARGET, TARGET

DTYPES = ("float32", "bfloat16", "float16")
#: Tolerance between the package and JAX's autodiff, relative to the largest
#: magnitude of a result: JAX's own error (the plain formula, rounded per
#: operation in half types) dominates it.
TOLERANCE = {"float32": 2e-5, "bfloat16": 3e-2, "float16": 4e-3}
N = 16  # elements per operand: 8 devices x 2 for the sharded cells

# ------------------------------------------------------------ entry points --


@jax.jit  # its constants are literals, so eager calls move nothing to the device
def _native_silu_grad(g, x):
    """SiluGrad as JAX users write it: the formula in jnp (broadcasting as silu_grad does)."""
    s = jax.nn.sigmoid(x)
    return g * (s * (1 + x * (1 - s)))


@jax.jit
def _native_swiglu_grad(g, x):
    """SwiGluGrad's dA + dB at A = B = x as JAX users write it: g * (x * s'(x) + silu(x))."""
    s = jax.nn.sigmoid(x)
    return g * (x * (s * (1 + x * (1 - s))) + x * s)


def _swiglu(x):
    """swiglu of x packed with sigmoid(x) along a leading axis 0 (not the
    last): silu(x) * sigmoid(x), shaped like x, so every transformation
    applies. A bounded B keeps the half types' native rounding (per
    operation) within the matrix's tolerance through scan and training."""
    return jas.swiglu(jnp.stack([x, jax.nn.sigmoid(x)]), axis=0).reshape(x.shape)


def _alike(g, x):
    """g and x broadcast to one shape, as silu_grad broadcasts them (vmap's cells batch one alone)."""
    shape = jnp.broadcast_shapes(g.shape, x.shape)
    return jnp.broadcast_to(g, shape), jnp.broadcast_to(x, shape)


def _swiglu_grad(g, x):
    """dA + dB of swiglu_grad at A = B = x (packed along axis 0): linear in g, as silu_grad."""
    g, x = _alike(g, x)
    dx = jas.swiglu_grad(g[None], jnp.stack([x, x]), axis=0)
    # Summed, not indexed: an index's transpose pads with a scalar moved to the device (transfer_guard cells).
    return jax.lax.reduce_sum(dx, (0,))


def _silu_mul_grad(g, x):
    g, x = _alike(g, x)
    return _plus(*jas.silu_mul_grad(g, x, x))


def _swiglu_grad_p(g, x):
    g, x = _alike(g, x)
    return _plus(*jas.swiglu_grad_p.bind(g, x, x))


def _plus(da, db):
    return da + db


#: name -> (arity, the package's op, the native op)
ENTRIES = {
    "silu": (1, jas.silu, jax.nn.silu),
    "route": (1, jas.route(jax.nn.silu), jax.nn.silu),
    "silu_grad": (2, jas.silu_grad, _native_silu_grad),
    "silu_grad_p": (2, lambda g, x: jas.silu_grad_p.bind(g, x), _native_silu_grad),
    "swiglu": (1, _swiglu, lambda x: jax.nn.silu(x) * jax.nn.sigmoid(x)),
    # silu_mul(x, g) = silu(x) * g: linear in g, so it fills silu_grad's place in every transformation.
    "silu_mul": (2, lambda g, x: jas.silu_mul(x, g), lambda g, x: jax.nn.silu(x) * g),
    "swiglu_grad": (2, _swiglu_grad, _native_swiglu_grad),
    "silu_mul_grad": (2, _silu_mul_grad, _native_swiglu_grad),
    "swiglu_grad_p": (2, _swiglu_grad_p, _native_swiglu_grad),
}
_SWIGLU_CALL = f'custom_call_target="{SWIGLU_TARGET}"'


def _expected_call(entry, transform):
    """The custom call a reverse-mode cell runs, or None. SwiGLU's backward
    pass is its call. Differentiating SwiGluGrad runs SiluGrad's: in
    grad_output the transpose is SwiGLU's tangent (jnp), and in x it is
    s'(x) * t (silu's tangent, transposed to SiluGrad). In train_step a binary
    entry is the backward pass of a custom_vjp SiLU: silu_mul's forward is jnp."""
    if entry in ("silu", "route", "silu_grad", "silu_grad_p"):
        return HLO_CALL
    if entry == "silu_mul" and transform == "train_step":
        return None
    if entry in ("swiglu", "silu_mul") or transform == "train_step":
        return _SWIGLU_CALL
    return HLO_CALL

# ---------------------------------------------------------- transformations --
# Each takes (op, arity, inputs) and returns a tree of arrays. inputs: x, g, w
# (weights) of shape (N,), and a mesh of the 8 CPU devices.


def _unary(op, arity, g):
    """The op as a function of x alone (a binary op takes g as its grad_output)."""
    return op if arity == 1 else (lambda v: op(g, v))


def _loss(op, arity, g, w):
    f = _unary(op, arity, g)
    return lambda v: (f(v) * w).sum()


def _eager(op, arity, x, g, w, mesh):
    return op(x) if arity == 1 else op(g, x)


def _jit(op, arity, x, g, w, mesh):
    return jax.jit(op)(x) if arity == 1 else jax.jit(op)(g, x)


def _vmap(op, arity, x, g, w, mesh):
    if arity == 1:
        return jax.vmap(op)(x.reshape(4, 4))
    return jax.vmap(op, in_axes=(0, None))(g.reshape(4, 4), x[:4]), jax.vmap(op, in_axes=(1, 0))(
        g.reshape(4, 4), x[:4])


def _grad(op, arity, x, g, w, mesh):
    if arity == 1:
        return jax.grad(_loss(op, 1, g, w))(x)
    return jax.grad(lambda a, b: (op(a, b) * w).sum(), argnums=(0, 1))(g, x)


def _vjp(op, arity, x, g, w, mesh):
    if arity == 1:
        return jax.vjp(op, x)[1](w)
    return jax.vjp(op, g, x)[1](w)


def _jvp(op, arity, x, g, w, mesh):
    if arity == 1:
        return jax.jvp(op, (x,), (w,))
    return jax.jvp(op, (g, x), (w, w))


def _linearize(op, arity, x, g, w, mesh):
    if arity == 1:
        return jax.linearize(op, x)[1](w)
    return jax.linearize(op, g, x)[1](w, w)


def _linear_transpose(op, arity, x, g, w, mesh):
    if arity == 1:  # the transpose of silu's linearisation: its backward pass
        return jax.linear_transpose(jax.linearize(op, x)[1], x)(w)
    return jax.linear_transpose(lambda t: op(t, x), g)(w)


def _hessian(op, arity, x, g, w, mesh):
    return jax.hessian(_loss(op, arity, g[:4], w[:4]))(x[:4])


def _grad_of_grad(op, arity, x, g, w, mesh):
    inner = jax.grad(_loss(op, arity, g, w))
    return jax.grad(lambda v: (inner(v) * w).sum())(x)


def _remat(policy):
    def run(op, arity, x, g, w, mesh):
        return jax.grad(jax.checkpoint(_loss(op, arity, g, w), policy=policy))(x)

    return run


def _scan(op, arity, x, g, w, mesh):
    f = _unary(op, arity, g)

    def loss(v):
        out, _ = jax.lax.scan(lambda c, _: (f(c) * w, None), v, None, length=3)
        return out.sum()

    return jax.grad(loss)(x)


def _fori_loop(op, arity, x, g, w, mesh):
    f = _unary(op, arity, g)
    return jax.grad(lambda v: jax.lax.fori_loop(0, 3, lambda i, c: f(c) * w, v).sum())(x)


def _train_step(op, arity, x, g, w, mesh):
    """Two jitted SGD steps of a SiLU MLP. A binary op is the backward pass of
    a custom_vjp SiLU, as users write one."""
    if arity == 1:
        act = op
    else:
        act = jax.custom_vjp(jax.nn.silu)
        act.defvjp(lambda v: (jax.nn.silu(v), v), lambda v, ct: (op(ct, v),))
    w1 = jnp.outer(x, w)[:, :8] / 8

    def loss(params, v):
        a, b = params
        return ((act(v[:, None] * a) @ b) ** 2).mean()

    @jax.jit
    def step(params, v):
        grads = jax.grad(loss)(params, v)
        return jax.tree.map(lambda p, d: p - (d * 0.1).astype(p.dtype), params, grads)

    params = (w1[:1], w1[:8, :1])
    return step(step(params, x), x)


def _grad_fn(op, arity):
    """_grad as a function of the three inputs alone (to shard, map over devices or export)."""
    return lambda a, b, c: _grad(op, arity, a, b, c, None)


def _shard_map(op, arity, x, g, w, mesh):
    spec = P("d")
    fn = jax.shard_map(_grad_fn(op, arity), mesh=mesh, in_specs=(spec, spec, spec), out_specs=spec)
    return jax.jit(fn)(x, g, w)


def _pmap(op, arity, x, g, w, mesh):
    return jax.pmap(_grad_fn(op, arity))(x.reshape(8, 2), g.reshape(8, 2), w.reshape(8, 2))


def _sharded(axis_type):
    def run(op, arity, x, g, w, mesh):
        m = jax.make_mesh((8,), ("d",), axis_types=(axis_type,))
        s = NamedSharding(m, P("d"))
        a, b, c = (jax.device_put(v, s) for v in (x, g, w))
        return jax.jit(_grad_fn(op, arity))(a, b, c)

    return run


def _export(op, arity, x, g, w, mesh):
    """Exported, serialized and called back, as README says (the custom call allowed)."""
    fn = jax.jit(_grad_fn(op, arity))
    checks = [export.DisabledSafetyCheck.custom_call(t) for t in (TARGET, SWIGLU_TARGET)]
    exp = export.export(fn, disabled_checks=checks)(x, g, w)
    return export.deserialize(exp.serialize()).call(x, g, w)


TRANSFORMS = {
    "eager": _eager,
    "jit": _jit,
    "vmap": _vmap,
    "grad": _grad,
    "vjp": _vjp,
    "jvp": _jvp,
    "linearize": _linearize,
    "linear_transpose": _linear_transpose,
    "hessian": _hessian,
    "grad_of_grad": _grad_of_grad,
    "remat_nothing_saveable": _remat(jax.checkpoint_policies.nothing_saveable),
    "remat_dots_saveable": _remat(jax.checkpoint_policies.dots_saveable),
    "scan": _scan,
    "fori_loop": _fori_loop,
    "train_step": _train_step,
    "shard_map": _shard_map,
    "pmap": _pmap,
    "sharded_auto": _sharded(AxisType.Auto),
    "sharded_explicit": _sharded(AxisType.Explicit),
    "export": _export,
}

# ------------------------------------------------------------------ configs --
# name -> (context, what x holds). "nan": x[3] is NaN, and the run also
# checks that a jitted function of the user's that ran before (on healthy
# input, as did the program, twice) still raises on a NaN. "inf": x[3] is
# +inf, where the package returns SiluGrad's limits and JAX's autodiff of the
# formula NaN (docs/api.md's limits); no debug_* cell holds inf, as which
# intermediate of the two computations is infinite differs by design.

@contextlib.contextmanager
def _global_debug_nans():
    """jax_debug_nans set process-wide, as users do (jax.config.update): the
    form that JAX's bug strikes (op.py), where the thread-local one does not.
    The bug strikes when a jitted function is traced, so the caches are
    cleared first: each run traces afresh, whatever ran before it."""
    jax.clear_caches()
    jax.config.update("jax_debug_nans", True)
    try:
        yield
    finally:
        jax.config.update("jax_debug_nans", False)


CONFIGS = {
    "default": (contextlib.nullcontext, "finite"),
    "inf": (contextlib.nullcontext, "inf"),
    "debug_nans": (lambda: jax.debug_nans(True), "finite"),
    "debug_nans_nan": (lambda: jax.debug_nans(True), "nan"),
    "debug_nans_global_nan": (_global_debug_nans, "nan"),
    "debug_infs": (lambda: jax.debug_infs(True), "finite"),
    "strict_promotion": (lambda: jax.numpy_dtype_promotion("strict"), "finite"),
    "rank_promotion_raise": (lambda: jax.numpy_rank_promotion("raise"), "finite"),
    "x64": (lambda: jax.enable_x64(True), "finite"),
    "transfer_guard_disallow": (lambda: jax.transfer_guard("disallow"), "finite"),
    "disable_jit": (lambda: jax.disable_jit(True), "finite"),
}

#: Configs whose native outcomes are taken under other configs too, any of
#: which the package may match. With jax_debug_nans set process-wide, JAX's
#: bug switches the NaN check off inside jax.nn.silu's own jvp and vmap
#: (native returns NaN silently, and so does the user's function after it):
#: there the package is held to what jax.nn.silu does where the bug does not
#: strike, under the thread-local flag. Where JAX's own machinery strikes
#: whatever the activation (scan, fori_loop and checkpoint's partial
#: evaluation), the package may end as jax.nn.silu does with the global flag.
REFERENCE_CONFIGS = {"debug_nans_global_nan": ("debug_nans_nan", "debug_nans_global_nan")}

#: Cells the package cannot match, (entry, transform, config) with "*" for
#: any, and why; each runs as a strict xfail. docs/composition.md's "Every
#: transformation" lists the same.
EXCEPTIONS: dict[tuple[str, str, str], str] = {}

#: The entries run in every dtype; route and silu_grad_p bind the same
#: primitives as silu and silu_grad, so they run in float32. SwiGLU's five
#: entries bind three primitives: silu_mul runs them in every dtype (its
#: backward pass is the SwiGluGrad call), the packed and direct forms in
#: float32 (their halves and bindings do not depend on the dtype), which keeps
#: every cell of the matrix within CI's time.
ALL_DTYPES = ("silu", "silu_grad", "silu_mul")


def _exception(entry, transform, config):
    for (e, t, c), why in EXCEPTIONS.items():
        if e in (entry, "*") and t in (transform, "*") and c in (config, "*"):
            return why
    return None


# ------------------------------------------------------------------ running --


def _inputs(dtype, holds):
    x = np.linspace(-5.0, 5.0, N)
    if holds == "nan":
        x[3] = np.nan
    elif holds == "inf":
        x[3] = np.inf
    rng = np.random.default_rng(7)
    g = rng.uniform(-2.0, 2.0, N)
    w = rng.uniform(0.5, 1.5, N)
    return tuple(jnp.asarray(a, dtype) for a in (x, g, w))


#: Exceptions that say the same thing: under jax.checkpoint JAX's NaN check
#: sometimes lets its internal signal escape instead of the FloatingPointError.
_KINDS = {"InternalFloatingPointError": "FloatingPointError"}


def _run_in_fresh_thread(fn):
    box = {}

    def target():
        try:
            box["value"] = fn()
        except Exception as err:  # the outcome being compared
            box["error"] = err

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    return box


def _outcome(op, arity, transform, config, dtype):
    """What the program gives in a fresh thread: ("ok", arrays) or ("raised", type name);
    for NaN inputs also whether an earlier-jitted user function still caught a NaN."""
    context, holds = CONFIGS[config]
    mesh = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Auto,))

    def run():
        healthy = _inputs(dtype, "finite")
        x, g, w = _inputs(dtype, holds)
        nan = healthy[0].at[5].set(jnp.nan)
        with context():
            user = jax.jit(lambda v: v * 2)
            if holds == "nan":
                user(healthy[0])
                for _ in range(2):
                    jax.block_until_ready(TRANSFORMS[transform](op, arity, *healthy, mesh))
            try:
                out = ["ok", jax.block_until_ready(TRANSFORMS[transform](op, arity, x, g, w, mesh)), ""]
            except Exception as err:
                out = ["raised", _KINDS.get(type(err).__name__, type(err).__name__),
                       (str(err).splitlines() or [""])[0][:300]]
            if holds == "nan":
                try:
                    user(nan).block_until_ready()
                    caught = False
                except FloatingPointError:
                    caught = True
                out.append(f"user's jitted function caught a NaN: {caught}")
        return out

    box = _run_in_fresh_thread(run)
    if "error" in box:  # raised outside the program itself
        raise box["error"]
    result = box["value"]
    if result[0] == "ok":
        result[1] = jax.tree.map(np.asarray, result[1])
    return result


def _assert_same(ours, native, dtype, holds):
    """Outcomes are [kind, arrays or exception type, message, (NaN check of the user's function)]."""
    assert ours[0] == native[0], f"package: {ours}\nnative: {native}"
    assert ours[3:] == native[3:], f"package: {ours[3:]}\nnative: {native[3:]}"
    if ours[0] == "raised":
        assert ours[1] == native[1], f"package raised {ours[1:]}, native {native[1:]}"
        return
    a, b = ours[1], native[1]
    assert jax.tree.structure(a) == jax.tree.structure(b)
    tol = TOLERANCE[dtype]
    for u, v in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        assert (u.dtype, u.shape) == (v.dtype, v.shape), f"package {u.dtype}{u.shape}, native {v.dtype}{v.shape}"
        u32, v32 = u.astype(np.float64), v.astype(np.float64)
        both = np.isfinite(u32) & np.isfinite(v32)
        # Where the native result is NaN the package's may be too; at x = +inf
        # the package returns s'(inf)'s limit where JAX's autodiff gives NaN.
        assert np.array_equal(np.isnan(u32), np.isnan(v32)) or (holds == "inf" and not np.isnan(u32[~np.isnan(v32)]).any()), (
            f"NaNs differ: package {u}, native {v}")
        assert np.array_equal(np.isinf(u32) & ~np.isnan(v32), np.isinf(v32)), f"infinities differ: package {u}, native {v}"
        if both.any():
            scale = max(np.abs(v32[both]).max(), 1e-30)
            np.testing.assert_allclose(u32[both], v32[both], rtol=tol, atol=tol * scale)


def _cells():
    # Entries last: the entries that compare with one native op (silu and route, the SwiGluGrad
    # forms ...) sit side by side, and pytest-xdist hands consecutive tests to one worker, whose
    # _NATIVE then holds that native outcome for all of them.
    for transform in TRANSFORMS:
        for config in CONFIGS:
            for dtype in DTYPES:
                for entry in ENTRIES:
                    if dtype not in (DTYPES if entry in ALL_DTYPES else DTYPES[:1]):
                        continue
                    why = _exception(entry, transform, config)
                    marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
                    yield pytest.param(entry, transform, config, dtype, marks=marks,
                                       id=f"{entry}-{transform}-{config}-{dtype}")


_NATIVE: dict = {}  # native outcomes, shared by the entries that compare with the same native op


# A sample by default (tests/sampling.py): every entry, transformation, config
# and dtype at least once; JAX_ASCEND_SILU_TEST_CASES=all runs all the cells.
@pytest.mark.combinatorial(cases=24)
@pytest.mark.parametrize(("entry", "transform", "config", "dtype"), list(_cells()))
def test_cell(entry, transform, config, dtype):
    arity, ours, native = ENTRIES[entry]
    result = _outcome(ours, arity, transform, config, dtype)
    mismatches = []
    for reference in REFERENCE_CONFIGS.get(config, (config,)):
        key = (native, transform, reference, dtype)
        if key not in _NATIVE:
            _NATIVE[key] = _outcome(native, arity, transform, reference, dtype)
        try:
            _assert_same(result, _NATIVE[key], dtype, CONFIGS[config][1])
            return
        except AssertionError as err:
            mismatches.append(f"against native under {reference}: {err}")
    raise AssertionError("\n".join(mismatches))


# ---------------------------------------------------------- the custom call --


@pytest.mark.parametrize("entry", list(ENTRIES))
@pytest.mark.parametrize("transform", ["grad", "sharded_auto", "sharded_explicit", "shard_map", "train_step"])
def test_reverse_mode_runs_the_custom_call_without_collectives(entry, transform):
    """The matrix compares values; this checks that the package's cells really
    call the kernel, and that on 8 devices nothing is gathered around it."""
    arity, op, _ = ENTRIES[entry]
    call = _expected_call(entry, transform)
    x, g, w = _inputs("float32", "finite")
    mesh = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Auto,))
    if transform.startswith("sharded"):
        m = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Auto if transform.endswith("auto") else AxisType.Explicit,))
        x, g, w = (jax.device_put(v, NamedSharding(m, P("d"))) for v in (x, g, w))
        transform = "grad"
    hlo = jax.jit(lambda a, b, c: TRANSFORMS[transform](op, arity, a, b, c, mesh)).lower(x, g, w).compile().as_text()
    assert call is None or call in hlo
    collectives = [line.strip() for line in hlo.splitlines()
                   if any(f" {c}(" in line or f" {c}-start(" in line for c in ("all-gather", "all-reduce", "all-to-all"))]
    assert not collectives, "\n".join(collectives)

