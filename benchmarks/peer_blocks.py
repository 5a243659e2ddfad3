"""SiluGrad against PyTorch's ``aten.silu_backward``, in alternating blocks.

PyTorch's OpenMP workers spin for milliseconds after each parallel region
(libgomp's default wait policy), and this package's helpers watch for the
next task for a few milliseconds too. Interleaving single calls would let
one contender's spinning threads take a core from the other, so each
contender runs a block of calls of its own, then every thread is left to
settle (``--pause-ms``) before the next block; the blocks alternate, each
round in the reverse order of the one before.

Two kinds of block: back to back, and each call after a ``--gap-ms`` idle
moment, as a training loop's Python work leaves one. The figure per round
is the median call of each block; the table gives the median over rounds
and each round's ratio to this package's block of the same round.

    python benchmarks/peer_blocks.py [--log2-sizes 20 22] [--rounds 10] [--calls 41]

float32, fresh results (no donation) for every contender: PyTorch's
``silu_backward`` writes a new tensor, as this package's ``silu_grad`` does.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time


def contenders(n: int) -> dict:
    import jax
    import jax.numpy as jnp
    import torch

    from jax_ascend_silu.bench.elementwise import _to_torch, _xla_silu_grad, fresh_silu_grad, inputs

    g, x = inputs(n, jnp.float32)
    tg, tx = _to_torch(torch, g), _to_torch(torch, x)
    ours, xla = jax.jit(fresh_silu_grad), jax.jit(_xla_silu_grad)
    return {
        "ours": lambda: jax.block_until_ready(ours(g, x)),
        "xla": lambda: jax.block_until_ready(xla(g, x)),
        "torch": lambda: torch.ops.aten.silu_backward(tg, tx),
    }


def block(call, calls: int, gap_s: float) -> float:
    """The median microseconds of ``calls`` timed calls, each after
    ``gap_s`` of sleep (none: back to back)."""
    call()  # the block's first call wakes whatever the pause let sleep
    times = []
    for _ in range(calls):
        if gap_s:
            time.sleep(gap_s)
        start = time.perf_counter()
        out = call()
        times.append((time.perf_counter() - start) * 1e6)
        del out
    return statistics.median(times)


def measure(log2_sizes, rounds: int, calls: int, gap_s: float, pause_s: float) -> dict:
    out: dict = {}
    for log2 in log2_sizes:
        ops = contenders(1 << log2)
        for call in ops.values():  # compile and warm up
            for _ in range(3):
                call()
        for mode, gap in (("back_to_back", 0.0), ("gap", gap_s)):
            per_round: dict[str, list[float]] = {name: [] for name in ops}
            order = list(ops)
            for r in range(rounds):
                for name in order if r % 2 == 0 else reversed(order):
                    per_round[name].append(block(ops[name], calls, gap))
                    time.sleep(pause_s)
            out[f"{log2}/{mode}"] = per_round
    return out


def _row(label: str, per_round: dict[str, list[float]]) -> str:
    def ms(name):
        return f"{statistics.median(per_round[name]) / 1e3:.3f}"

    def ratio(name):
        r = [a / b for a, b in zip(per_round[name], per_round["ours"])]
        return f"{statistics.median(r):.2f}x ({min(r):.2f}-{max(r):.2f})"

    return f"| {label} | {ms('ours')} | {ms('xla')} | {ms('torch')} | {ratio('torch')} | {ratio('xla')} |"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--log2-sizes", type=int, nargs="+", default=[20, 22])
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--calls", type=int, default=41, help="timed calls per block")
    p.add_argument("--gap-ms", type=float, default=2.0)
    p.add_argument("--pause-ms", type=float, default=50.0, help="settling time after each block")
    p.add_argument("--json", help="write every block's median here")
    args = p.parse_args(argv)
    import torch

    from jax_ascend_silu.bench import settings_line

    res = measure(args.log2_sizes, args.rounds, args.calls, args.gap_ms / 1e3, args.pause_ms / 1e3)
    print(f"{settings_line()}; torch {torch.__version__} ({torch.get_num_threads()} threads); {args.rounds} rounds "
          f"x {args.calls} calls per block; load average {os.getloadavg()[0]:.2f}")
    print("ms: median over rounds of each block's median call; ratios: each round's time over ours "
          "(median, range over rounds)\n")
    print("| float32 | ours | XLA autodiff | PyTorch | PyTorch / ours | XLA / ours |")
    print("|---|---|---|---|---|---|")
    for key, per_round in res.items():
        log2, mode = key.split("/")
        label = f"2^{log2}, {'back to back' if mode == 'back_to_back' else f'after {args.gap_ms:g} ms idle'}"
        print(_row(label, per_round))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
