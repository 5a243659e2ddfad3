"""Bandwidth of silu_grad on one device, against a device-to-device copy and
XLA's autodiff of jax.nn.silu measured in the same run, and the training
steps of an MLP and a SwiGLU block, all in one table.

    python benchmarks/device_bandwidth.py                    # the first GPU (.ci/gpu runs this)
    python benchmarks/device_bandwidth.py --device cpu --log2-sizes 16 20
    python benchmarks/device_bandwidth.py --dry-run          # every case, tiny, on the CPU

Flat: g and x of n elements; each call reads both and writes grad_input,
3 * n * itemsize bytes. Broadcast: g (4, n/4) against x (1, n/4), as vmap over
four cotangents with a shared x gives: 2.25 * n * itemsize bytes. SwiGLU:
SwiGluGrad's pair form, g, gate and up of n elements in, d_gate and d_up out
(silu_mul_grad against XLA's autodiff of silu(gate) * up), 5 * n * itemsize
bytes. The copy
moves 2 * n * itemsize (an n-element array). GB/s are those bytes over the
median time of a call (jitted, fresh output, inputs already on the device,
dispatch included); `ours/copy` is the share of the copy's bandwidth. The
contenders are sampled round by round by the package's interleaved timing
(jax_ascend_silu/bench/timing.py, which `python -m jax_ascend_silu bench`
uses too), so load from other processes falls on all of them alike. The
training steps (jax_ascend_silu/bench/models.py) compare this package's silu
with jax.nn.silu: MLP width 2048, batch 128; SwiGLU (silu(x @ W1) * (x @ W3)) @ W2,
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
LAYOUTS = ("flat", "broadcast", "swiglu")
#: Elements each call moves, in units of n: reads plus writes.
MOVED = {"flat": 3.0, "broadcast": 2.25, "swiglu": 5.0}
OPERATION = {"flat": "SiluGrad flat", "broadcast": "SiluGrad broadcast", "swiglu": "SwiGluGrad pair"}
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


def measure(device, n: int, dtype_name: str, reps: int = 15, layout: str = "flat", budget_s: float = 0.5) -> dict:
    """One row: seconds and GB/s for copy, this package and XLA autodiff."""
    dtype = DTYPES[dtype_name]
    shapes = {"flat": ((n,), (n,)), "swiglu": ((n,), (n,), (n,)),
              "broadcast": ((BROADCAST_ROWS, n // BROADCAST_ROWS), (1, n // BROADCAST_ROWS))}[layout]
    keys = jax.random.split(jax.random.PRNGKey(n), len(shapes))
    with jax.default_device(device):
        g, *operands = [(scale * jax.random.normal(key, shape, jnp.float32)).astype(dtype)
                        for key, shape, scale in zip(keys, shapes, (1, 4, 1))]
    itemsize = np.dtype(dtype).itemsize
    copy = jax.jit(jnp.copy)
    if copy(g).unsafe_buffer_pointer() == g.unsafe_buffer_pointer():
        raise RuntimeError("jax.jit(jnp.copy) returned its input's buffer: no copy to compare with")
    ours = jax.jit(jas.silu_mul_grad if layout == "swiglu" else jas.silu_grad)
    xla = jax.jit({"flat": _xla_silu_grad, "broadcast": _xla_broadcast_silu_grad, "swiglu": _xla_swiglu_grad}[layout])
    moved = MOVED[layout] * n * itemsize
    row = {"device": str(device), "n": n, "dtype": dtype_name, "layout": layout}
    cases = (
        ("copy", copy, (g,), 2 * g.size * itemsize),
        ("ours", ours, (g, *operands), moved),
        ("xla_autodiff", xla, (g, *operands), moved),
    )
    contenders = [Contender(name, fn, lambda args=args: args, jax.block_until_ready) for name, fn, args, _ in cases]
    stats = measure_interleaved(contenders, repeats=reps, budget_s=budget_s)
    for name, _, _, nbytes in cases:
        seconds = stats[name].median
        row[f"{name}_s"] = seconds
        row[f"{name}_gbps"] = nbytes / seconds / 1e9
    row["fraction_of_copy"] = row["ours_gbps"] / row["copy_gbps"]
    row["xla_fraction_of_copy"] = row["xla_autodiff_gbps"] / row["copy_gbps"]
    row["speedup_vs_xla"] = row["xla_autodiff_s"] / row["ours_s"]
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
    print("| case | n | dtype | copy GB/s | ours GB/s | XLA GB/s | ours/copy | XLA/copy | ours vs XLA | "
          "ours ms | XLA ms |", file=out)
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|", file=out)
    for r in rows:
        print(f"| {OPERATION[r['layout']]} | 2^{int(np.log2(r['n']))} | {r['dtype']} | "
              f"{r['copy_gbps']:.1f} | {r['ours_gbps']:.1f} | {r['xla_autodiff_gbps']:.1f} | "
              f"{r['fraction_of_copy']:.0%} | {r['xla_fraction_of_copy']:.0%} | {r['speedup_vs_xla']:.2f}x | "
              f"{r['ours_s'] * 1e3:.3f} | {r['xla_autodiff_s'] * 1e3:.3f} |", file=out)
    for m in model_rows:
        name = {"mlp": "MLP training step", "swiglu": "SwiGLU training step"}[m["model"]]
        print(f"| {name} ({'x'.join(map(str, m['sizes']))}) | - | {m['dtype']} | - | - | - | - | - | "
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
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    if args.dry_run:
        args.device, args.log2_sizes, args.layouts, args.models = "cpu", [10, 12], list(LAYOUTS), True
        args.reps, args.budget_s = 1, 0.01
    try:
        device = jax.devices(args.device)[0]
    except RuntimeError:
        print(f"no {args.device} device on this machine (try --device cpu)", file=sys.stderr)
        return 2
    print(f"{device.device_kind} ({device.platform}); jax {jax.__version__}; backends: "
          f"{ {k: v['platforms'] for k, v in jas.backends().items()} }")
    rows = [measure(device, 1 << p, d, args.reps, layout, args.budget_s)
            for layout in args.layouts for d in args.dtypes for p in args.log2_sizes]
    sizes = MODELS["dry" if args.dry_run else "full"]
    model_rows = [measure_model(device, model, d, sizes[model], max(5, args.reps // 2) if not args.dry_run else 1,
                                args.budget_s)
                  for model in (sizes if args.models else ()) for d in MODEL_DTYPES]
    print()
    print_table(rows, model_rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "models": model_rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
