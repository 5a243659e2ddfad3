"""Whole jitted calls on CPU, not only the kernel's loop: page faults and time per call.

For each size, this package's SiluGrad (a fresh result, the primitive's
``overwrite_grad_output=False``) and XLA's own fusion of ``jax.nn.silu``'s
autodiff, each in a jitted program of its own, are called in turn; every call
is timed and its minor page faults counted (``getrusage``: the faults taken
while the result's freshly mapped pages are first written). Each thread count
runs in a process of its own, since JAX_ASCEND_SILU_THREADS is read once per
process; it caps this package's threads only (XLA's fusion keeps its own).

    python benchmarks/whole_call.py [--log2-sizes 16 18 20 22] [--threads 1 2] [--calls 41]

JAX_ASCEND_SILU_ISA picks the kernel's instruction set as usual.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time


def measure(log2_sizes: list[int], calls: int, keep: int) -> list[dict]:
    """Per size and contender: median microseconds and minor faults per call."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from jax_ascend_silu.bench.elementwise import _xla_silu_grad, fresh_silu_grad, inputs

    rows = []
    for log2 in log2_sizes:
        g, x = inputs(1 << log2, jnp.float32)
        fns = {"ours": jax.jit(fresh_silu_grad), "xla": jax.jit(_xla_silu_grad)}
        for fn in fns.values():  # compile and warm up
            fn(g, x).block_until_ready()
        samples: dict[str, tuple[list[float], list[int]]] = {name: ([], []) for name in fns}
        alive: list = []
        for _ in range(calls):
            for name, fn in fns.items():  # interleaved, so load from other processes falls on both
                before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                start = time.perf_counter()
                out = fn(g, x)
                out.block_until_ready()
                seconds = time.perf_counter() - start
                faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
                alive = [*alive, out][-keep:] if keep else []
                del out
                samples[name][0].append(seconds * 1e6)
                samples[name][1].append(faults)
        np.testing.assert_array_equal(np.isfinite(np.asarray(fns["ours"](g, x))), True)
        for name, (us_list, fault_list) in samples.items():
            rows.append({"log2": log2, "name": name, "us": statistics.median(us_list),
                         "faults": statistics.median(fault_list)})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2-sizes", type=int, nargs="+", default=[16, 18, 20, 22])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2],
                        help="JAX_ASCEND_SILU_THREADS values, one process each")
    parser.add_argument("--calls", type=int, default=41, help="calls per contender and size")
    parser.add_argument("--keep", type=int, default=0,
                        help="results kept alive (so the allocator must find new memory for the next ones)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        json.dump(measure(args.log2_sizes, args.calls, args.keep), sys.stdout)
        return 0
    results = {}
    for threads in args.threads:
        env = dict(os.environ, JAX_ASCEND_SILU_THREADS=str(threads))
        cmd = [sys.executable, __file__, "--child", "--calls", str(args.calls), "--keep", str(args.keep),
               "--log2-sizes", *map(str, args.log2_sizes)]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            sys.stderr.write(done.stderr)
            print(f"whole_call.py: the run with JAX_ASCEND_SILU_THREADS={threads} failed (above)", file=sys.stderr)
            return 1
        results[threads] = {(r["log2"], r["name"]): r for r in json.loads(done.stdout)}
    print(f"ISA: {os.environ.get('JAX_ASCEND_SILU_ISA', 'automatic')}; medians of {args.calls} calls; "
          f"{args.keep} results kept alive; faults: minor page faults per call")
    head = ["size"]
    for threads in args.threads:
        head += [f"ours, {threads} thr: us", "faults", f"XLA ({threads}): us", "faults", "XLA / ours"]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for log2 in args.log2_sizes:
        cells = [f"2^{log2}"]
        for threads in args.threads:
            ours, xla = results[threads][(log2, "ours")], results[threads][(log2, "xla")]
            cells += [f"{ours['us']:.0f}", f"{ours['faults']:.0f}", f"{xla['us']:.0f}", f"{xla['faults']:.0f}",
                      f"{xla['us'] / ours['us']:.2f}"]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
