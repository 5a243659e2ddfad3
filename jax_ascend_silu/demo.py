"""The demo job, what the package is for in a few seconds: train a small SiLU
MLP with this package's ``silu`` and check its gradients against the same
model built on ``jax.nn.silu``; route a SwiGLU feed-forward block, written on
``jax.nn.silu``, and show its fused call and the temporary memory of its
gradient against unrouted; and show the gradient at the root of s'(x) and at
x = +-inf beside ``jax.nn.silu``'s."""

from __future__ import annotations

import sys
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from ._ffi import SWIGLU_TARGET, TARGET
from .activation import silu
from .route import route, route_report

Params = list[tuple[jax.Array, jax.Array]]


def init_mlp(key: jax.Array, sizes: tuple[int, ...], dtype=jnp.float32) -> Params:
    """He-initialised dense layers for the given layer sizes."""
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        key, sub = jax.random.split(key)
        w = jax.random.normal(sub, (n_in, n_out), dtype) * jnp.sqrt(2.0 / n_in).astype(dtype)
        params.append((w, jnp.zeros((n_out,), dtype)))
    return params


def mlp(params: Params, x: jax.Array, activation: Callable = silu) -> jax.Array:
    for w, b in params[:-1]:
        x = activation(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss_fn(params: Params, x: jax.Array, y: jax.Array, activation: Callable = silu) -> jax.Array:
    return jnp.mean((mlp(params, x, activation) - y) ** 2)


def synthetic_data(key: jax.Array, n: int = 512, d_in: int = 16, d_out: int = 4):
    """A smooth nonlinear regression target the MLP can learn."""
    kx, kw = jax.random.split(key)
    x = jax.random.normal(kx, (n, d_in))
    w = jax.random.normal(kw, (d_in, d_out)) / jnp.sqrt(d_in)
    return x, jnp.sin(2.0 * x @ w) + 0.5 * (x @ w) ** 2


def make_train(activation: Callable, lr: float = 0.05, steps_per_call: int = 50):
    """A jitted function running `steps_per_call` SGD steps in a lax.scan;
    returns the new parameters and the loss at each step."""

    def step(params, batch):
        x, y = batch
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y, activation)
        params = jax.tree.map(lambda p, g: p - lr * g, params, grads)
        return params, loss

    @jax.jit
    def train(params, x, y):
        batches = (jnp.broadcast_to(x, (steps_per_call, *x.shape)), jnp.broadcast_to(y, (steps_per_call, *y.shape)))
        return jax.lax.scan(step, params, batches)

    return train


def max_grad_difference(params: Params, x: jax.Array, y: jax.Array) -> float:
    ours = jax.jit(jax.grad(loss_fn), static_argnums=3)(params, x, y, silu)
    native = jax.jit(jax.grad(loss_fn), static_argnums=3)(params, x, y, jax.nn.silu)
    diffs = jax.tree.leaves(jax.tree.map(lambda a, b: jnp.max(jnp.abs(a - b)), ours, native))
    return float(max(diffs))


def swiglu_block(params: dict[str, jax.Array], x: jax.Array) -> jax.Array:
    """A Llama-style SwiGLU feed-forward, written on ``jax.nn.silu`` as models write it."""
    return (jax.nn.silu(x @ params["gate"]) * (x @ params["up"])) @ params["down"]


def swiglu_loss(params: dict[str, jax.Array], x: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.mean((swiglu_block(params, x) - y) ** 2)


#: The feed-forward shown: d, hidden, tokens. Small, so it compiles and runs in
#: moments; the temporary memory of its gradient, routed over unrouted, is the
#: ratio docs/performance.md gives at 4096 tokens, d 512, hidden 1408.
SWIGLU_SHAPE = (64, 176, 256)


def _swiglu_operands(d: int, hidden: int, tokens: int, seed: int):
    """(params, x, y) of the feed-forward, float32, scaled so its values stay near 1 (drawn by
    NumPy: jax.random would compile a program per shape, which takes longer than the rest)."""
    rng = np.random.default_rng(seed)
    weights = {k: rng.standard_normal(s) / np.sqrt(s[0])
               for k, s in (("gate", (d, hidden)), ("up", (d, hidden)), ("down", (hidden, d)))}
    x, y = rng.standard_normal((tokens, d)), rng.standard_normal((tokens, d))
    return ({k: jnp.asarray(w, jnp.float32) for k, w in weights.items()},
            jnp.asarray(x, jnp.float32), jnp.asarray(y, jnp.float32))


def _temp_kib(compiled) -> float | None:
    """Temporary memory XLA planned for a compiled program, in KiB (None where the backend does not say)."""
    analysis = compiled.memory_analysis()
    return None if analysis is None else analysis.temp_size_in_bytes / 2**10


def show_swiglu(seed: int, tolerance: float, out) -> bool:
    """The SwiGLU block through ``route``: what it fused, the custom calls of its gradient,
    the memory XLA plans for it against unrouted, and its gradient against unrouted's."""
    params, x, y = _swiglu_operands(*SWIGLU_SHAPE, seed)
    report = route_report(swiglu_loss)(params, x, y)
    # The programs XLA runs: their text holds the custom calls, their plan the memory.
    routed = jax.jit(jax.grad(route(swiglu_loss))).lower(params, x, y).compile()
    unrouted = jax.jit(jax.grad(swiglu_loss)).lower(params, x, y).compile()
    text = routed.as_text() or ""
    fused, alone = (text.count(f'custom_call_target="{t}"') for t in (SWIGLU_TARGET, TARGET))
    d, hidden, tokens = SWIGLU_SHAPE
    print(f"SwiGLU block (silu(x @ W_gate) * (x @ W_up)) @ W_down on jax.nn.silu, {d}-{hidden}-{d}, "
          f"{tokens} tokens, float32, through jas.route:", file=out)
    print(f"  route_report: {report}", file=out)
    print(f"  custom calls in its gradient: {fused} {SWIGLU_TARGET}, {alone} {TARGET}", file=out)
    ours, native = _temp_kib(routed), _temp_kib(unrouted)
    if ours is None or native is None:
        print("  temporary memory of its gradient: not reported by this backend", file=out)
    else:
        print(f"  temporary memory XLA plans for its gradient: routed {ours:.0f} KiB, unrouted {native:.0f} KiB "
              f"({ours / native:.2f}x)", file=out)
    mine, theirs = routed(params, x, y), unrouted(params, x, y)
    scale = max(float(jnp.max(jnp.abs(g))) for g in jax.tree.leaves(theirs))
    diff = max(float(jnp.max(jnp.abs(a - b))) for a, b in zip(jax.tree.leaves(mine), jax.tree.leaves(theirs)))
    close = bool(np.isfinite(diff)) and diff <= tolerance * scale
    fused_once = report.swiglu == 1 and fused == 1
    print(f"  largest gradient difference vs unrouted, relative to its largest entry: {diff / scale:.3e} "
          f"({'OK' if close else 'FAIL'}, tolerance {tolerance:.0e})"
          + ("" if fused_once else "; FAIL: the SwiGLU was not fused into one call"), file=out)
    return close and fused_once


#: x where s'(x) crosses zero: the float32 nearest -1.27846454276...
ROOT = np.float32(-1.2784645)


def _exact_silu_prime(x: np.ndarray) -> np.ndarray:
    """s'(x) in float64, with its limits at +-inf (1 and 0)."""
    with np.errstate(over="ignore", invalid="ignore"):
        sigma = 1.0 / (1.0 + np.exp(-x))
        value = sigma * (1.0 + x * (1.0 - sigma))
    return np.where(np.isposinf(x), 1.0, np.where(np.isneginf(x), 0.0, value))


def show_edges(out) -> bool:
    """d/dx silu at the root of s' and at +-inf, this package's against jax.nn.silu's and the exact value."""
    x = jnp.asarray([ROOT, np.inf, -np.inf], jnp.float32)
    ours = np.asarray(jax.vmap(jax.grad(silu))(x))
    theirs = np.asarray(jax.vmap(jax.grad(jax.nn.silu))(x))
    exact = _exact_silu_prime(np.asarray(x, np.float64))
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)

    def cell(value: float, want: float, step: float) -> str:
        """The value, and its error in ulp where both are finite."""
        error = f"{abs(value - want) / step:.2g} ulp" if np.isfinite(value) and np.isfinite(want) else ""
        return f"{value:<13.7g} {error:<12}"

    print("d/dx silu(x) in float32, against the exact value (float64):", file=out)
    print(f"  {'x':<20}{'jas.silu':<27}{'jax.nn.silu':<27}exact", file=out)
    for i, where in enumerate((f"{ROOT:.8g} (root)", "+inf", "-inf")):
        print(f"  {where:<20}{cell(ours[i], exact[i], ulp[i]):<27}{cell(theirs[i], exact[i], ulp[i]):<27}"
              f"{exact[i]:.7g}", file=out)
    right = bool(abs(ours[0] - exact[0]) <= 4 * ulp[0]) and np.array_equal(ours[1:], exact[1:])
    print(f"  this package: {'within 4 ulp at the root, the limits at +-inf' if right else 'FAIL'}", file=out)
    return right


def run(steps: int = 300, hidden: int = 64, seed: int = 0, tolerance: float = 1e-5, out=None) -> int:
    """Trains, prints progress, compares gradients; shows a routed SwiGLU block and the
    gradient at the root and at +-inf; returns a process exit code."""
    out = out or sys.stdout
    key = jax.random.PRNGKey(seed)
    k_data, k_init = jax.random.split(key)
    x, y = synthetic_data(k_data)
    params = init_mlp(k_init, (x.shape[1], hidden, hidden, y.shape[1]))
    chunk = 50  # steps per compiled call (and per progress line); the last call runs what is left
    trains: dict[int, Callable] = {}
    print(f"training a {x.shape[1]}-{hidden}-{hidden}-{y.shape[1]} SiLU MLP for {steps} steps "
          f"on {jax.devices()[0].platform}", file=out)
    done = 0
    while done < steps:
        n = min(chunk, steps - done)
        if n not in trains:
            trains[n] = make_train(silu, steps_per_call=n)
        params, losses = trains[n](params, x, y)
        done += n
        print(f"  step {done:5d}  loss {float(losses[-1]):.6f}", file=out)
    diff = max_grad_difference(params, x, y)
    ok = bool(np.isfinite(diff)) and diff <= tolerance
    print(f"largest gradient difference vs jax.nn.silu: {diff:.3e} "
          f"({'OK' if ok else 'FAIL'}, tolerance {tolerance:.0e})", file=out)
    swiglu_ok = show_swiglu(seed, tolerance, out)
    edges_ok = show_edges(out)
    return 0 if ok and swiglu_ok and edges_ok else 1
