"""Bandwidth of SiluGrad and SwiGluGrad on one device, each case against
XLA's autodiff of the same function and against a same-mix bound measured
in the same run, and the training steps of an MLP and a SwiGLU block, all in
one table.

    python benchmarks/device_bandwidth.py                    # the first GPU (.ci/gpu runs this)
    python benchmarks/device_bandwidth.py --device cpu --log2-sizes 16 20
    python benchmarks/device_bandwidth.py --dry-run          # every case, tiny, on the CPU

The same-mix bound is XLA's fusion of trivial arithmetic with the same reads
and writes: ``g + x`` for SiluGrad flat (two reads, one write), the same
``g + x`` with x broadcast for the broadcast case, ``(g + a, g - b)`` for
SwiGLU (three reads, two writes). An elementwise kernel beats it by little;
``ours/bound`` is the share of it reached. ``spec`` is the card's HBM
bandwidth (--spec-tbps, else a table of known cards; "-" where unknown).

Device time (``*_s``): ``--calls`` calls dispatched back to back and one
wait, over the number of calls, as a program that keeps the device busy
sees them (the dispatch of one call overlaps the previous call's run).
Wall time (``*_wall_s``): one call and its wait, dispatch included, which is
what decides at 2^20-2^22 elements.

"root" is the flat case with x within about 0.01 of s'(x)'s root (-1.2785), where
the kernels hand lanes to their rare path: its time against flat's is what
inputs clustered there cost.

Bytes per call, in units of n elements of itemsize: flat 3 (g and x in,
grad_input out); broadcast g (4, n/4) against x (1, n/4) 2.25 (g, x once,
grad_input; a kernel that walks rows reads x once per row once x outgrows
the cache, 3 in all: the bound, walking the same rows, pays that too);
SwiGLU pair form 5 (g, gate and up in, d_gate and d_up out). GB/s are
those bytes over the time. The contenders are sampled round by round by the
package's interleaved timing (jax_ascend_silu/bench/timing.py), so load from
other processes falls on all of them alike. The training steps
(jax_ascend_silu/bench/models.py) compare this package's silu with
jax.nn.silu: MLP width 2048, batch 128; SwiGLU (silu(x @ W1) * (x @ W3)) @ W2,
batch 256, d 512, hidden 1408.
"""

from __future__ import annotations

import argparse
import json
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jax_ascend_silu as jas
from jax_ascend_silu.bench import models
from jax_ascend_silu.bench.timing import Contender, measure as measure_interleaved

DTYPES = {"float32": jnp.float32, "float16": jnp.float16, "bfloat16": jnp.bfloat16}
LAYOUTS = ("flat", "root", "broadcast", "swiglu")
#: Elements each call moves, in units of n: reads plus writes.
MOVED = {"flat": 3.0, "root": 3.0, "broadcast": 2.25, "swiglu": 5.0}
OPERATION = {"flat": "SiluGrad flat", "root": "SiluGrad flat, x near the root", "broadcast": "SiluGrad broadcast",
             "swiglu": "SwiGluGrad pair"}
#: s'(x) = 0 at x = -1.27846...: "root" draws x within about 0.01 of it, as pre-activations clustered there
#: are, where the kernels' fast path hands lanes to the root expansion (their rare path).
ROOT = -1.2784645
#: HBM bandwidth of known cards, bytes per second (the vendors' data sheets).
SPEC = {"NVIDIA H100 80GB HBM3": 3.35e12, "NVIDIA H200": 4.8e12}
BROADCAST_ROWS = 4  # g (4, n/4) against x (1, n/4)
#: The training steps, full size and for --dry-run: MLP (hidden, batch); SwiGLU (batch, d, hidden).
MODELS = {"full": {"mlp": (2048, 128), "swiglu": (256, 512, 1408)}, "dry": {"mlp": (32, 8), "swiglu": (8, 16, 32)}}
MODEL_DTYPES = ("float32", "bfloat16")


def _xla_silu_grad(g, x):
    return jax.vjp(jax.nn.silu, x)[1](g)[0]


def _xla_broadcast_silu_grad(g, x):
    return _xla_silu_grad(g, jnp.broadcast_to(x, g.shape))


def _xla_swiglu_grad(g, gate, up):
    return jax.vjp(lambda a, b: jax.nn.silu(a) * b, gate, up)[1](g)


def _bound_flat(g, x):
    return g + x


def _bound_swiglu(g, a, b):
    return g + a, g - b


def back_to_back(fn, calls: int):
    """``calls`` calls of fn on the same arguments, dispatched one after the other, the last result
    returned: waiting on it waits for all of them (one stream, in order)."""
    def run(*args):
        out = None
        for _ in range(calls):
            out = fn(*args)
        return out
    return run


def spec_of(device, given: float | None) -> float | None:
    if given:
        return given * 1e12
    kind = getattr(device, "device_kind", "")
    return next((v for k, v in SPEC.items() if kind.startswith(k)), None)


def measure(device, n: int, dtype_name: str, reps: int = 15, layout: str = "flat", budget_s: float = 0.5,
            calls: int = 20, spec: float | None = None) -> dict:
    """One row: device and wall seconds and GB/s for the same-mix bound, this package and XLA autodiff."""
    dtype = DTYPES[dtype_name]
    shapes = {"flat": ((n,), (n,)), "root": ((n,), (n,)), "swiglu": ((n,), (n,), (n,)),
              "broadcast": ((BROADCAST_ROWS, n // BROADCAST_ROWS), (1, n // BROADCAST_ROWS))}[layout]
    keys = jax.random.split(jax.random.PRNGKey(n), len(shapes))
    # (scale, offset) of each operand's normal draw.
    draws = ((1, 0), (0.005, ROOT), (1, 0)) if layout == "root" else ((1, 0), (4, 0), (1, 0))
    with jax.default_device(device):
        g, *operands = [(offset + scale * jax.random.normal(key, shape, jnp.float32)).astype(dtype)
                        for key, shape, (scale, offset) in zip(keys, shapes, draws)]
    itemsize = np.dtype(dtype).itemsize
    functions = {
        "bound": jax.jit(_bound_swiglu if layout == "swiglu" else _bound_flat),
        "ours": jax.jit(jas.silu_mul_grad if layout == "swiglu" else jas.silu_grad),
        "xla_autodiff": jax.jit({"flat": _xla_silu_grad, "root": _xla_silu_grad, "broadcast": _xla_broadcast_silu_grad,
                                 "swiglu": _xla_swiglu_grad}[layout]),
    }
    args = (g, *operands)
    moved = MOVED[layout] * n * itemsize
    row = {"device": str(device), "n": n, "dtype": dtype_name, "layout": layout, "bytes": moved, "calls": calls}
    contenders = []
    for name, fn in functions.items():
        contenders.append(Contender(name, back_to_back(fn, calls), lambda: args, jax.block_until_ready))
        contenders.append(Contender(f"{name}_wall", fn, lambda: args, jax.block_until_ready))
    stats = measure_interleaved(contenders, repeats=reps, budget_s=budget_s)
    for name in functions:
        row[f"{name}_s"] = stats[name].median / calls
        row[f"{name}_wall_s"] = stats[f"{name}_wall"].median
        row[f"{name}_gbps"] = moved / row[f"{name}_s"] / 1e9
    row["ours_of_bound"] = row["bound_s"] / row["ours_s"]
    row["xla_of_bound"] = row["bound_s"] / row["xla_autodiff_s"]
    row["speedup_vs_xla"] = row["xla_autodiff_s"] / row["ours_s"]
    row["wall_speedup_vs_xla"] = row["xla_autodiff_wall_s"] / row["ours_wall_s"]
    row["spec_gbps"] = spec / 1e9 if spec else None
    row["ours_of_spec"] = row["ours_gbps"] * 1e9 / spec if spec else None
    return row


def measure_model(device, model: str, dtype_name: str, sizes: tuple, reps: int, budget_s: float) -> dict:
    """One row: a jitted training step with this package's silu and with jax.nn.silu."""
    with jax.default_device(device):
        if model == "mlp":
            stats = models.mlp_step(*sizes, DTYPES[dtype_name], reps, budget_s)
        else:
            stats = models.swiglu_step(*sizes, DTYPES[dtype_name], reps, budget_s)
    return {"device": str(device), "model": model, "sizes": list(sizes), "dtype": dtype_name,
            "ours_s": stats["ours"].median, "native_s": stats["native"].median,
            "speedup_vs_native": stats["native"].median / stats["ours"].median}


def print_table(rows: list[dict], model_rows: list[dict] = (), out=sys.stdout) -> None:
    """One markdown table: the SiluGrad and SwiGluGrad rows, then the training steps (times only)."""
    print("| case | n | dtype | bound GB/s | ours GB/s | XLA GB/s | ours/bound | XLA/bound | ours/spec | "
          "ours vs XLA (device) | ours vs XLA (wall) | ours ms | XLA ms |", file=out)
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|", file=out)
    for r in rows:
        spec = f"{r['ours_of_spec']:.0%}" if r.get("ours_of_spec") else "-"
        print(f"| {OPERATION[r['layout']]} | 2^{int(np.log2(r['n']))} | {r['dtype']} | "
              f"{r['bound_gbps']:.1f} | {r['ours_gbps']:.1f} | {r['xla_autodiff_gbps']:.1f} | "
              f"{r['ours_of_bound']:.0%} | {r['xla_of_bound']:.0%} | {spec} | {r['speedup_vs_xla']:.2f}x | "
              f"{r['wall_speedup_vs_xla']:.2f}x | {r['ours_s'] * 1e3:.3f} | {r['xla_autodiff_s'] * 1e3:.3f} |",
              file=out)
    for m in model_rows:
        name = {"mlp": "MLP training step", "swiglu": "SwiGLU training step"}[m["model"]]
        print(f"| {name} ({'x'.join(map(str, m['sizes']))}) | - | {m['dtype']} | - | - | - | - | - | - | - | "
              f"{m['speedup_vs_native']:.2f}x | {m['ours_s'] * 1e3:.3f} | {m['native_s'] * 1e3:.3f} |", file=out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="gpu", help="jax platform: gpu (default), cuda or cpu")
    parser.add_argument("--log2-sizes", type=int, nargs="+", default=[20, 22, 24, 26, 28])
    parser.add_argument("--dtypes", nargs="+", default=list(DTYPES), choices=list(DTYPES))
    parser.add_argument("--layouts", nargs="+", default=["flat"], choices=LAYOUTS)
    parser.add_argument("--models", action="store_true", help="also the MLP and SwiGLU training steps")
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--budget-s", type=float, default=0.5, help="seconds of samples per row, beyond --reps")
    parser.add_argument("--dry-run", action="store_true",
                        help="every row and layout and the training steps, tiny, on the CPU: checks the harness")
    parser.add_argument("--calls", type=int, default=20, help="calls dispatched back to back per device-time sample")
    parser.add_argument("--spec-tbps", type=float, help="the card's HBM bandwidth in TB/s (default: known cards)")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    if args.dry_run:
        args.device, args.log2_sizes, args.layouts, args.models = "cpu", [10, 12], list(LAYOUTS), True
        args.reps, args.budget_s, args.calls = 1, 0.01, 2
    try:
        device = jax.devices(args.device)[0]
    except RuntimeError:
        print(f"no {args.device} device on this machine (try --device cpu)", file=sys.stderr)
        return 2
    print(f"{device.device_kind} ({device.platform}); jax {jax.__version__}; backends: "
          f"{ {k: v['platforms'] for k, v in jas.backends().items()} }")
    spec = spec_of(device, args.spec_tbps)
    print(f"spec: {spec / 1e12:.2f} TB/s" if spec else "spec: unknown card (give --spec-tbps)")
    rows = [measure(device, 1 << p, d, args.reps, layout, args.budget_s, args.calls, spec)
            for layout in args.layouts for d in args.dtypes for p in args.log2_sizes]
    sizes = MODELS["dry" if args.dry_run else "full"]
    model_rows = [measure_model(device, model, d, sizes[model], max(5, args.reps // 2) if not args.dry_run else 1,
                                args.budget_s)
                  for model in (sizes if args.models else ()) for d in MODEL_DTYPES]
    print()
    print_table(rows, model_rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device.device_kind, "spec_gbps": spec / 1e9 if spec else None, "rows": rows,
                       "models": model_rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
