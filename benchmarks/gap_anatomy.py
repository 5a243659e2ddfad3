"""Where a float32 call's time goes after an idle moment: the threads, or the
caches.

A call after a 2 ms pause runs slower than the same call back to back. Two
things change in the pause: helper threads may fall asleep, and other
processes (on a virtual machine: other guests sharing the last-level cache)
evict the call's operands from the cache. This script tells them apart by
timing the same call five ways, each a block of calls, blocks interleaved
round by round:

- back to back: the operands stay in the last-level cache between calls;
- caches flushed: right before each call (untimed) a buffer of
  ``--flush-mib`` is written, evicting the operands; no sleep;
- 2 ms asleep (``time.sleep``) and 2 ms spinning (the caller busy in a
  Python loop, its CPU never idle);
- 10 ms asleep: past the helpers' watch (kernel/cpu/helpers.h), so they
  sleep too.

Run it once as it is and once with JAX_ASCEND_SILU_THREADS=1: if the
one-thread call loses as much after a pause as the threaded one, the pause
costs memory traffic, not a late helper.

    python benchmarks/gap_anatomy.py [--log2-sizes 18 20 22] [--rounds 6] [--calls 25]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--log2-sizes", type=int, nargs="+", default=[18, 20, 22])
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--calls", type=int, default=25, help="timed calls per block")
    p.add_argument("--flush-mib", type=int, default=128, help="more than the last-level cache")
    args = p.parse_args(argv)

    import jax
    import jax.numpy as jnp

    from jax_ascend_silu.bench import settings_line
    from jax_ascend_silu.bench.elementwise import _xla_silu_grad, fresh_silu_grad, inputs

    flush_buffer = np.ones(args.flush_mib << 18, np.float32)

    def flush():
        flush_buffer[:] += 1.0

    before = {
        "back to back": None,
        "caches flushed": flush,
        "2 ms asleep": lambda: time.sleep(0.002),
        "2 ms spinning": lambda: _spin(0.002),
        "10 ms asleep": lambda: time.sleep(0.010),
    }
    print(f"{settings_line()}; {args.rounds} rounds x {args.calls} calls per block")
    print("float32, ms: median over rounds of each block's median call\n")
    print("| n | contender | " + " | ".join(before) + " |")
    print("|---|---|" + "---|" * len(before))
    for log2 in args.log2_sizes:
        g, x = inputs(1 << log2, jnp.float32)
        ops = {"ours": jax.jit(fresh_silu_grad), "XLA autodiff": jax.jit(_xla_silu_grad)}
        for f in ops.values():
            for _ in range(3):
                jax.block_until_ready(f(g, x))
        medians: dict = {}
        for _ in range(args.rounds):
            for name, f in ops.items():
                for mode, wait in before.items():
                    times = []
                    for _ in range(args.calls):
                        if wait is None:
                            jax.block_until_ready(f(g, x))
                        else:
                            wait()
                        start = time.perf_counter()
                        jax.block_until_ready(f(g, x))
                        times.append(time.perf_counter() - start)
                    medians.setdefault((name, mode), []).append(statistics.median(times) * 1e3)
        for name in ops:
            cells = [f"{statistics.median(medians[(name, mode)]):.3f}" for mode in before]
            print(f"| 2^{log2} | {name} | " + " | ".join(cells) + " |")
    print(f"\nload average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
