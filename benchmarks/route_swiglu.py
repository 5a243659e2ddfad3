"""SwiGLU through ``route``, the user's view: a model's unchanged code, routed
(each ``silu(a) * b`` fused into one SwiGLU operation) against the same code
unrouted (XLA's autodiff), and against the code with ``jas.silu`` in place of
``jax.nn.silu`` (SiluGrad alone: what route did before it fused SwiGLU).

- temporary memory XLA plans for the jitted gradient
  (``compiled.memory_analysis().temp_size_in_bytes``) of a SwiGLU
  feed-forward's MSE loss (float32, bfloat16) and of a tiny keras-hub Llama;
- time of a training step (SGD) of both, each call after an idle gap
  (``--gap-ms``, default 2 ms), contenders alternated in random order round
  after round (jax_ascend_silu.bench.timing).

    python benchmarks/route_swiglu.py [--rounds 30] [--gap-ms 2] [--json out.json]

keras-hub (the [keras-hub] extra) is needed for the Llama rows; without it they are left out.
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("KERAS_BACKEND", "jax")

import jax
import jax.numpy as jnp
import numpy as np

import jax_ascend_silu as jas
from jax_ascend_silu.bench import environment
from jax_ascend_silu.bench.timing import Contender, measure

# The feed-forward of benchmarks/swiglu.py: d -> f -> d, tokens per step; memory at MEMORY_TOKENS.
D, F, TOKENS, MEMORY_TOKENS = 512, 1408, 256, 4096
# The tiny Llama: keras-hub's LlamaBackbone at these sizes, batch x sequence tokens.
LLAMA = {"vocabulary_size": 256, "num_layers": 2, "num_query_heads": 4, "num_key_value_heads": 2,
         "hidden_dim": 128, "intermediate_dim": 352}
LLAMA_BATCH, LLAMA_SEQUENCE = 8, 128


def ffn(activation):
    """A SwiGLU feed-forward as Llama ports write it, on ``activation`` (jax.nn.silu or jas.silu)."""
    def apply(p, x):
        return (activation(x @ p["gate"]) * (x @ p["up"])) @ p["down"]
    return apply


def mse(apply):
    def loss(p, x, y):
        return jnp.mean((apply(p, x).astype(jnp.float32) - y) ** 2)
    return loss


def sgd(loss):
    @jax.jit
    def step(p, x, y):
        value, grads = jax.value_and_grad(loss)(p, x, y)
        return value, jax.tree.map(lambda w, g: w - (1e-3 * g).astype(w.dtype), p, grads)
    return step


def temp_bytes(loss, *args) -> int:
    return jax.jit(jax.grad(loss)).lower(*args).compile().memory_analysis().temp_size_in_bytes


def llama_problem():
    """(loss(trainable, token_ids, target), trainable, token_ids, target) of a tiny keras-hub Llama, or None."""
    try:
        import keras
        import keras_hub
    except ImportError:
        return None
    keras.utils.set_random_seed(0)
    backbone = keras_hub.models.LlamaBackbone(**LLAMA)
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, LLAMA["vocabulary_size"], (LLAMA_BATCH, LLAMA_SEQUENCE)).astype("int32")
    target = rng.standard_normal((LLAMA_BATCH, LLAMA_SEQUENCE, LLAMA["hidden_dim"])).astype("float32")
    trainable = [v.value for v in backbone.trainable_variables]
    non_trainable = [v.value for v in backbone.non_trainable_variables]

    def loss(trainable, tokens, target):
        out, _ = backbone.stateless_call(trainable, non_trainable,
                                         {"token_ids": tokens, "padding_mask": jnp.ones_like(tokens)})
        return jnp.mean((out.astype(jnp.float32) - target) ** 2)

    return loss, trainable, jnp.asarray(tokens), jnp.asarray(target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--gap-ms", type=float, default=2.0)
    parser.add_argument("--budget-s", type=float, default=20.0, help="time per comparison, at least --rounds rounds")
    parser.add_argument("--json")
    args = parser.parse_args()
    env = environment()
    print(f"# {env['cpu']}, {env['cores']} cores, kernel ISA {env['kernel_isa']}, jax {env['jax']}; "
          f"each call after a {args.gap_ms:g} ms gap")
    rows: list[dict] = []

    def row(case: str, routed: float, unrouted: float, silugrad: float | None, unit: str) -> None:
        """One line: memory as routed/unrouted (lower is better), time as unrouted/routed (higher is better)."""
        ratio = routed / unrouted if unit == "MiB" else unrouted / routed
        rows.append({"case": case, "unit": unit, "routed": routed, "unrouted": unrouted, "silugrad_only": silugrad,
                     "ratio": ratio})
        extra = "" if silugrad is None else f"   SiluGrad only {silugrad:9.3f}"
        print(f"{case:52s} routed {routed:9.3f} {unit}   unrouted {unrouted:9.3f}{extra}   {ratio:5.2f}x", flush=True)

    def timed(name, fn, operands) -> Contender:
        def prepare():
            time.sleep(args.gap_ms / 1000.0)
            return operands
        return Contender(name, fn, prepare, finish=jax.block_until_ready)

    def compare(case, steps, operands) -> None:
        stats = measure([timed(name, fn, operands) for name, fn in steps.items()], args.rounds, args.budget_s)
        ms = {name: s.median * 1e3 for name, s in stats.items()}
        row(case, ms["routed"], ms["unrouted"], ms.get("silugrad"), "ms")

    rng = np.random.default_rng(0)
    routed_ffn, plain_ffn, silugrad_ffn = jas.route(ffn(jax.nn.silu)), ffn(jax.nn.silu), ffn(jas.silu)
    assert jas.route_report(plain_ffn)(
        {k: jnp.zeros(s) for k, s in (("gate", (D, F)), ("up", (D, F)), ("down", (F, D)))},
        jnp.zeros((1, D))) == jas.RouteReport(swiglu=1)
    for dtype in (jnp.float32, jnp.bfloat16):
        name = jnp.dtype(dtype).name
        shapes = {"gate": (D, F), "up": (D, F), "down": (F, D)}
        specs = {k: jax.ShapeDtypeStruct(s, dtype) for k, s in shapes.items()}
        x, y = jax.ShapeDtypeStruct((MEMORY_TOKENS, D), dtype), jax.ShapeDtypeStruct((MEMORY_TOKENS, D), jnp.float32)
        mib = [temp_bytes(mse(a), specs, x, y) / 2**20 for a in (routed_ffn, plain_ffn, silugrad_ffn)]
        row(f"memory: feed-forward gradient, MSE, {MEMORY_TOKENS} tokens, {name}", *mib, "MiB")
        params = {k: jnp.asarray(rng.standard_normal(s) / np.sqrt(s[0]), dtype) for k, s in shapes.items()}
        xs = jnp.asarray(rng.standard_normal((TOKENS, D)), dtype)
        ys = jnp.asarray(rng.standard_normal((TOKENS, D)), jnp.float32)
        compare(f"time: feed-forward step {D}->{F}->{D}, {TOKENS} tokens, {name}",
                {"routed": sgd(mse(routed_ffn)), "unrouted": sgd(mse(plain_ffn)), "silugrad": sgd(mse(silugrad_ffn))},
                (params, xs, ys))

    llama = llama_problem()
    if llama is None:
        print("# keras-hub not installed: no Llama rows")
    else:
        loss, trainable, tokens, target = llama
        assert jas.route_report(loss)(trainable, tokens, target).swiglu == LLAMA["num_layers"]
        size = f"{LLAMA['num_layers']} layers, {LLAMA['hidden_dim']}/{LLAMA['intermediate_dim']}, " \
               f"{LLAMA_BATCH}x{LLAMA_SEQUENCE} tokens"
        mib = [temp_bytes(f, trainable, tokens, target) / 2**20 for f in (jas.route(loss), loss)]
        row(f"memory: keras-hub Llama gradient, {size}", *mib, None, "MiB")
        compare(f"time: keras-hub Llama SGD step, {size}",
                {"routed": sgd(jas.route(loss)), "unrouted": sgd(loss)}, (trainable, tokens, target))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"environment": env, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
