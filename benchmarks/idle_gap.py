"""SiluGrad as programs call it: after an idle gap and after other work, beside
the back-to-back loop, in several processes.

For each size (float32), this package's SiluGrad (a fresh result) and XLA's
own fusion of ``jax.nn.silu``'s autodiff are timed three ways, interleaved
round by round in a new random order:

- back to back: one call right after the other;
- gap: ``--gap-ms`` (the bench's GAP_S, 2 ms) of ``time.sleep`` before each
  call, as a training loop's Python work or an evaluation loop's per-batch
  call leaves one;
- after matmul: the bench's program contender, one jitted program whose
  SiluGrad takes its ``grad_output`` from a (n / 32, 32) by (32, 32) matmul
  (XLA runs it on its intra-op pool), called after the same gap; the matmul
  alone is timed too, and the table shows the program's time less the
  matmul's median.

XLA's own fusion runs at one of two speeds fixed for the life of a process, so
every figure is the median of each process's median, with the range over the
processes. ``--one-thread`` adds processes with JAX_ASCEND_SILU_THREADS=1 for
the package's one-thread time after a gap.

    python benchmarks/idle_gap.py [--log2-sizes 16 18 20 22] [--processes 5] [--one-thread]

JAX_ASCEND_SILU_ISA and XLA_FLAGS (--xla_cpu_max_isa=AVX2) pass to every process.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time


def measure(log2_sizes: list[int], calls: int, gap_s: float, only_ours: bool) -> dict:
    """Median microseconds per (size, contender), in this process."""
    import jax
    import jax.numpy as jnp

    from jax_ascend_silu.bench.elementwise import (
        _xla_silu_grad,
        after_matmul,
        fresh_silu_grad,
        inputs,
        matmul_operands,
    )

    out: dict = {}
    for log2 in log2_sizes:
        n = 1 << log2
        g, x = inputs(n, jnp.float32)
        a, w = matmul_operands(n, jnp.float32)
        ops = {"ours": fresh_silu_grad} if only_ours else {"ours": fresh_silu_grad, "xla": _xla_silu_grad}
        plain = {name: jax.jit(op) for name, op in ops.items()}
        program = {name: after_matmul(op) for name, op in ops.items()}  # SiluGrad after a matmul it depends on
        matmul = jax.jit(lambda a, w: (a @ w).reshape(-1))
        cases = []  # (label, function, arguments, gap)
        for name in ops:
            cases.append((f"{name}", plain[name], (g, x), 0.0))
            cases.append((f"{name}_gap", plain[name], (g, x), gap_s))
            cases.append((f"{name}_after_matmul", program[name], (a, w, x), gap_s))
        cases.append(("matmul", matmul, (a, w), gap_s))
        for _, fn, args, _ in cases:  # compile and warm up
            for _ in range(3):
                jax.block_until_ready(fn(*args))
        samples: dict[str, list[float]] = {label: [] for label, *_ in cases}
        order = list(cases)
        shuffle = random.Random(log2).shuffle
        for _ in range(calls):
            shuffle(order)
            for label, fn, args, gap in order:
                if gap:
                    time.sleep(gap)
                else:  # back to back: the call right before is the same one
                    jax.block_until_ready(fn(*args))
                start = time.perf_counter()
                result = fn(*args)
                jax.block_until_ready(result)
                samples[label].append((time.perf_counter() - start) * 1e6)
                del result
        med = {label: statistics.median(s) for label, s in samples.items()}
        for name in ops:
            med[f"{name}_after_matmul"] -= med["matmul"]
        out[str(log2)] = med
    return out


def _worker(args) -> int:
    json.dump(measure(args.log2_sizes, args.calls, args.gap_ms / 1e3, args.only_ours), sys.stdout)
    return 0


def _spawn(args, one_thread: bool) -> dict:
    env = dict(os.environ)
    cmd = [sys.executable, __file__, "--worker", "--calls", str(args.calls), "--gap-ms", str(args.gap_ms),
           "--log2-sizes", *map(str, args.log2_sizes)]
    if one_thread:
        env["JAX_ASCEND_SILU_THREADS"] = "1"
        cmd.append("--only-ours")
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        raise SystemExit(run.stderr)
    return json.loads(run.stdout)


COLUMNS = (
    ("xla", "XLA, back to back"),
    ("xla_gap", "XLA, gap"),
    ("ours", "ours, back to back"),
    ("ours_gap", "ours, gap"),
    ("ours_1t_gap", "ours, 1 thread, gap"),
    ("xla_after_matmul", "XLA after matmul"),
    ("ours_after_matmul", "ours after matmul"),
)


def _cell(values: list[float]) -> str:
    if not values:
        return ""
    ms = [v / 1e3 for v in values]
    med = statistics.median(ms)
    return f"{med:.3f} ({min(ms):.3f}-{max(ms):.3f})" if len(ms) > 1 else f"{med:.3f}"


def _ratio(num: list[float], den: list[float]) -> str:
    """The median over processes of each process's ratio, and its range."""
    if not num or not den:
        return ""
    r = [a / b for a, b in zip(num, den)]
    return f"{statistics.median(r):.2f}x ({min(r):.2f}-{max(r):.2f})" if len(r) > 1 else f"{r[0]:.2f}x"


def table(runs: list[dict], one_thread_runs: list[dict]) -> str:
    sizes = sorted({int(k) for r in runs for k in r})
    present = [(k, h) for k, h in COLUMNS if k != "ours_1t_gap" or one_thread_runs]
    head = ["n"] + [h for _, h in present] + ["XLA / ours, gap", "ours gap / back to back"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for log2 in sizes:
        def col(key, size=str(log2)):
            if key == "ours_1t_gap":
                return [r[size]["ours_gap"] for r in one_thread_runs]
            return [r[size][key] for r in runs if key in r[size]]

        cells = [f"2^{log2}"] + [_cell(col(k)) for k, _ in present]
        cells += [_ratio(col("xla_gap"), col("ours_gap")), _ratio(col("ours_gap"), col("ours"))]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--log2-sizes", type=int, nargs="+", default=[16, 18, 20, 22])
    p.add_argument("--processes", type=int, default=5)
    p.add_argument("--calls", type=int, default=101, help="calls per contender, size and process")
    p.add_argument("--gap-ms", type=float, default=2.0, help="idle time before each gapped call (the bench's GAP_S)")
    p.add_argument("--one-thread", action="store_true", help="also processes with JAX_ASCEND_SILU_THREADS=1")
    p.add_argument("--json", help="write every process's medians here")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--only-ours", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return _worker(args)
    runs, one_thread_runs = [], []
    for _ in range(args.processes):  # the one-thread processes alternate with the others
        runs.append(_spawn(args, one_thread=False))
        if args.one_thread:
            one_thread_runs.append(_spawn(args, one_thread=True))
    from jax_ascend_silu.bench import settings_line

    print(f"{settings_line()}; {args.processes} processes x {args.calls} calls; load average {os.getloadavg()[0]:.2f}")
    print("ms: median over processes of each one's median (range over processes)\n")
    print(table(runs, one_thread_runs))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": runs, "one_thread_runs": one_thread_runs}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
