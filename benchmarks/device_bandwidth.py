"""Bandwidth of silu_grad on one device, against a device-to-device copy and
XLA's autodiff of jax.nn.silu measured in the same run.

    python benchmarks/device_bandwidth.py                    # the first GPU
    python benchmarks/device_bandwidth.py --device cpu --log2-sizes 16 20

Each call reads grad_output and x and writes grad_input: 3 * n * itemsize
bytes; the copy moves 2 * n * itemsize. GB/s are those bytes over the median
time of a call (jitted, fresh output, inputs already on the device, dispatch
included). The `copy` column is the bandwidth bound the others are compared
with. The three are sampled round by round by the package's interleaved
timing (jax_ascend_silu/bench/timing.py, which `python -m jax_ascend_silu
bench` uses too), so load from other processes falls on all of them alike.
"""

from __future__ import annotations

import argparse
import json
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jax_ascend_silu as jas
from jax_ascend_silu.bench.timing import Contender, measure as measure_interleaved

DTYPES = {"float32": jnp.float32, "float16": jnp.float16, "bfloat16": jnp.bfloat16}


def measure(device, n: int, dtype_name: str, reps: int = 15) -> dict:
    """One row: seconds and GB/s for copy, this package and XLA autodiff."""
    dtype = DTYPES[dtype_name]
    key_g, key_x = jax.random.split(jax.random.PRNGKey(n))
    with jax.default_device(device):
        g = jax.random.normal(key_g, (n,), jnp.float32).astype(dtype)
        x = (4 * jax.random.normal(key_x, (n,), jnp.float32)).astype(dtype)
    itemsize = np.dtype(dtype).itemsize
    copy = jax.jit(jnp.copy)
    ours = jax.jit(jas.silu_grad)
    xla = jax.jit(lambda g, x: jax.vjp(jax.nn.silu, x)[1](g)[0])
    row = {"device": str(device), "n": n, "dtype": dtype_name}
    cases = (
        ("copy", copy, (x,), 2 * n * itemsize),
        ("silu_grad", ours, (g, x), 3 * n * itemsize),
        ("xla_autodiff", xla, (g, x), 3 * n * itemsize),
    )
    contenders = [Contender(name, fn, lambda args=args: args, jax.block_until_ready) for name, fn, args, _ in cases]
    stats = measure_interleaved(contenders, repeats=reps, budget_s=0.5)
    for name, _, _, nbytes in cases:
        seconds = stats[name].median
        row[f"{name}_s"] = seconds
        row[f"{name}_gbps"] = nbytes / seconds / 1e9
    row["fraction_of_copy"] = row["silu_grad_gbps"] / row["copy_gbps"]
    row["speedup_vs_xla"] = row["xla_autodiff_s"] / row["silu_grad_s"]
    return row


def print_table(rows: list[dict], out=sys.stdout) -> None:
    print(f"{'n':>12} {'dtype':>9} {'copy GB/s':>10} {'ours GB/s':>10} {'XLA GB/s':>9} "
          f"{'ours/copy':>9} {'vs XLA':>7}", file=out)
    for r in rows:
        print(f"{'2^' + str(int(np.log2(r['n']))):>12} {r['dtype']:>9} {r['copy_gbps']:10.1f} "
              f"{r['silu_grad_gbps']:10.1f} {r['xla_autodiff_gbps']:9.1f} "
              f"{r['fraction_of_copy']:9.2f} {r['speedup_vs_xla']:6.2f}x", file=out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="gpu", help="jax platform: gpu (default), cuda or cpu")
    parser.add_argument("--log2-sizes", type=int, nargs="+", default=[20, 24, 26, 28])
    parser.add_argument("--dtypes", nargs="+", default=list(DTYPES), choices=list(DTYPES))
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    try:
        device = jax.devices(args.device)[0]
    except RuntimeError:
        print(f"no {args.device} device on this machine (try --device cpu)", file=sys.stderr)
        return 2
    print(f"{device.device_kind} ({device.platform}); backends: "
          f"{ {k: v['platforms'] for k, v in jas.backends().items()} }")
    rows = [measure(device, 1 << p, d, args.reps) for p in args.log2_sizes for d in args.dtypes]
    print_table(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
