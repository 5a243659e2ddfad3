"""Interleaved timing: every contender of a comparison is sampled once per
round, round after round, so that load from other processes on a shared
machine falls on all of them alike and their ratios stay meaningful. Each
round runs the contenders in a new random order: what one call leaves
behind (busy or sleeping pool threads, freed memory) then falls on every
other contender alike instead of always on the same successor."""

from __future__ import annotations

import gc
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field


@dataclass
class Contender:
    """One way of computing the same thing.

    ``prepare`` builds the arguments of one call outside the timed region
    (a fresh copy of a buffer the call donates, for instance); ``call`` runs
    it and returns something ``finish`` can wait on. ``gap_s`` of sleep come
    right before each timed call, as a program's other work leaves an idle
    moment before it: thread pools park their threads, and a call that needs
    them pays for waking them.
    """

    name: str
    call: Callable
    prepare: Callable[[], tuple]
    finish: Callable = lambda out: out
    gap_s: float = 0.0
    samples: list[float] = field(default_factory=list)

    def sample(self) -> float:
        args = self.finish(self.prepare())
        if self.gap_s:
            time.sleep(self.gap_s)
        start = time.perf_counter()
        out = self.finish(self.call(*args))
        elapsed = time.perf_counter() - start
        # Freed only now: releasing a large result returns its pages to the
        # system (munmap), which took milliseconds at 2^24 inside the timing.
        del out, args
        return elapsed


@dataclass(frozen=True)
class Stats:
    median: float
    minimum: float
    q1: float
    q3: float
    count: int

    @staticmethod
    def of(samples: Sequence[float]) -> Stats:
        q = statistics.quantiles(samples, n=4) if len(samples) > 1 else [samples[0]] * 3
        return Stats(statistics.median(samples), min(samples), q[0], q[2], len(samples))


def measure(contenders: Sequence[Contender], repeats: int, budget_s: float) -> dict[str, Stats]:
    """Warms every contender up, then samples them round by round: at least
    ``repeats`` rounds, more (up to 200) while the rounds fit in ``budget_s``."""
    for c in contenders:
        c.samples.clear()
        c.sample()  # compile and first touch
    warm = [c.sample() for c in contenders]
    per_round = sum(warm) + sum(c.gap_s for c in contenders)
    rounds = max(repeats, min(200, int(budget_s / max(per_round, 1e-9))))
    order = list(contenders)
    shuffle = random.Random(0).shuffle  # seeded: a rerun samples in the same orders
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(rounds):
            shuffle(order)
            for c in order:
                c.samples.append(c.sample())
    finally:
        if gc_was_enabled:
            gc.enable()
    return {c.name: Stats.of(c.samples) for c in contenders}
