"""SwiGLU through this package against XLA's autodiff of ``jax.nn.silu(a) * b``:
speed of the gradient and of a feed-forward training step, and the temporary
memory XLA plans for the gradient.

Every call is timed after an idle gap (``--gap-ms``, default 2 ms: what a
program's Python work between steps leaves), contenders alternated in random
order round after round (jax_ascend_silu.bench.timing), so load from other
processes falls on both alike. Memory is ``compiled.memory_analysis()``'s
``temp_size_in_bytes`` of the jitted gradient.

    python benchmarks/swiglu.py [--log2-sizes 20 24] [--rounds 30] [--gap-ms 2] [--json out.json]

To compare AVX2 on an AVX-512 machine, hold both to it:
``JAX_ASCEND_SILU_ISA=avx2 XLA_FLAGS=--xla_cpu_max_isa=AVX2``.
"""

from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log2-sizes", type=int, nargs="+", default=[20, 24])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--gap-ms", type=float, default=2.0)
    parser.add_argument("--json")
    args = parser.parse_args()

    import jax
    import jax.numpy as jnp
    import numpy as np

    import jax_ascend_silu as jas
    from jax_ascend_silu._ffi import ext
    from jax_ascend_silu.bench import cpu_name
    from jax_ascend_silu.bench.timing import Contender, measure

    gap = args.gap_ms / 1000.0
    rows: list[dict] = []
    print(f"# {cpu_name()}, kernel ISA {ext.isa()}, jax {jax.__version__}; each call after a {args.gap_ms:g} ms gap")

    def timed(name: str, fn, operands) -> Contender:
        def prepare():
            time.sleep(gap)
            return operands

        return Contender(name, fn, prepare, finish=jax.block_until_ready)

    def compare(case: str, ours, native, operands) -> None:
        stats = measure([timed("package", ours, operands), timed("xla", native, operands)], args.rounds, 20.0)
        p, x = stats["package"].median, stats["xla"].median
        rows.append({"case": case, "package_ms": p * 1e3, "xla_ms": x * 1e3, "speedup": x / p})
        print(f"{case:48s} package {p * 1e3:8.3f} ms   xla {x * 1e3:8.3f} ms   {x / p:5.2f}x", flush=True)

    rng = np.random.default_rng(0)

    # The gradient alone: (d_gate, d_up) from one cotangent.
    def native_grad(g, a, b):
        return jax.vjp(lambda u, v: jax.nn.silu(u) * v, a, b)[1](g)

    for log2 in args.log2_sizes:
        n = 1 << log2
        for dtype in (jnp.float32, jnp.bfloat16):
            g, a, b = (jnp.asarray(rng.standard_normal(n) * s, dtype) for s in (1.0, 3.0, 1.0))
            compare(f"gradient, 2^{log2} per half, {jnp.dtype(dtype).name}", jax.jit(jas.silu_mul_grad),
                    jax.jit(native_grad), (g, a, b))

    # A SwiGLU feed-forward (d -> f -> d) and its MSE training step.
    d, f, tokens = 512, 1408, 256

    def ffn(act):
        def apply(p, x):
            return (act(x @ p["gate"], x @ p["up"])) @ p["down"]
        return apply

    ours_ffn, native_ffn = ffn(jas.silu_mul), ffn(lambda u, v: jax.nn.silu(u) * v)

    def step(apply):
        def loss(p, x, y):
            return jnp.mean((apply(p, x).astype(jnp.float32) - y) ** 2)

        @jax.jit
        def update(p, x, y):
            grads = jax.grad(loss)(p, x, y)
            return jax.tree.map(lambda w, dw: w - 1e-3 * dw, p, grads)
        return update, loss

    for dtype in (jnp.float32, jnp.bfloat16):
        params = {k: jnp.asarray(rng.standard_normal(s) / np.sqrt(s[0]), dtype)
                  for k, s in (("gate", (d, f)), ("up", (d, f)), ("down", (f, d)))}
        x = jnp.asarray(rng.standard_normal((tokens, d)), dtype)
        y = jnp.asarray(rng.standard_normal((tokens, d)), jnp.float32)
        compare(f"feed-forward step {d}->{f}->{d}, batch {tokens}, {jnp.dtype(dtype).name}",
                step(ours_ffn)[0], step(native_ffn)[0], (params, x, y))

    # Temporary memory of the gradient, 4096 tokens.
    print("# temporary memory of the jitted gradient (memory_analysis), 4096 tokens")
    for dtype in (jnp.float32, jnp.bfloat16):
        params = {k: jax.ShapeDtypeStruct(s, dtype) for k, s in (("gate", (d, f)), ("up", (d, f)), ("down", (f, d)))}
        xs = jax.ShapeDtypeStruct((4096, d), dtype)
        ys = jax.ShapeDtypeStruct((4096, d), jnp.float32)
        for program, make in (("MSE loss", lambda apply: step(apply)[1]),
                              ("sum() of the output", lambda apply: lambda p, v, _: apply(p, v).sum())):
            temp = {}
            for name, apply in (("package", ours_ffn), ("xla", native_ffn)):
                compiled = jax.jit(jax.grad(make(apply))).lower(params, xs, ys).compile()
                temp[name] = compiled.memory_analysis().temp_size_in_bytes
            ratio = temp["package"] / temp["xla"]
            rows.append({"case": f"memory, {program}, {jnp.dtype(dtype).name}", "package_bytes": temp["package"],
                         "xla_bytes": temp["xla"], "ratio": ratio})
            print(f"memory, feed-forward gradient, {program:22s} {jnp.dtype(dtype).name:9s} package "
                  f"{temp['package'] / 2**20:7.1f} MiB   xla {temp['xla'] / 2**20:7.1f} MiB   {ratio:5.2f}x",
                  flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"cpu": cpu_name(), "isa": ext.isa(), "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
