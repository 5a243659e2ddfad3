"""Seeded samples of the combinatorial tests, so the default run stays short.

A test marked ``@pytest.mark.combinatorial(cases=K)`` is one cell of a large
product of parameters (the composition matrix is the largest:
docs/development.md gives its size), or one of a list of cases that together
take long. By default each such test runs a
sample of its cells: every value of every parameter at least once (a greedy
cover, taken in a seeded order; ``cover=("name", ...)`` names the parameters
to cover instead, ``cover=()`` none), then more cells in that order up to K.
Everything else runs as always. Two environment variables steer it,
as ``JAX_NUM_GENERATED_CASES`` steers JAX's own suite:

- ``JAX_ASCEND_SILU_TEST_CASES``: ``all`` runs every cell; a number N keeps N
  cells of each combinatorial test (never fewer than the cover needs);
  ``rest`` runs the cells the default sample of the same seed leaves out,
  and every test that is not combinatorial, so that a default run and a
  ``rest`` run with one seed run every cell once between them (CI splits
  them so).
- ``JAX_ASCEND_SILU_TEST_SEED``: the seed of the order. Unset, it is the UTC
  date (YYYYMMDD), so the sample rotates day by day; pytest's header prints
  it, and setting it reruns the same sample.

The choice depends only on the seed and the tests' node ids and parameter
values, so every pytest-xdist worker makes the same choice.
"""

from __future__ import annotations

import datetime
import hashlib
import os
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

import pytest

CASES_VARIABLE = "JAX_ASCEND_SILU_TEST_CASES"
SEED_VARIABLE = "JAX_ASCEND_SILU_TEST_SEED"
MARKER = "combinatorial"
MARKER_HELP = (f"{MARKER}(cases=K, cover=names): one cell of a product of parameters; the default run keeps a seeded "
               f"sample of K cells covering every value of the parameters named (all unless cover is given; "
               f"{CASES_VARIABLE}=all runs every cell)")


@dataclass(frozen=True)
class Plan:
    seed: int
    cases: int | None  # cells kept per combinatorial test; None: the K its marker names
    every: bool  # every cell of every combinatorial test
    rest: bool = False  # the cells the default sample of this seed leaves out

    def describe(self) -> str:
        if self.every:
            return f"combinatorial tests: every cell ({CASES_VARIABLE}=all)"
        if self.rest:
            return (f"combinatorial tests: the cells the seeded sample of seed {self.seed} leaves out "
                    f"({CASES_VARIABLE}=rest; with the default run of {SEED_VARIABLE}={self.seed}, every cell once)")
        size = f"{self.cases} cells of each" if self.cases is not None else "a seeded sample of each"
        return (f"combinatorial tests: {size} (tests/sampling.py), seed {self.seed}; "
                f"{SEED_VARIABLE}={self.seed} reruns it, {CASES_VARIABLE}=all runs every cell")


def plan_from(environ: Mapping[str, str], today: datetime.date | None = None) -> Plan:
    """The sampling plan the environment asks for; a malformed value is a usage error naming the variable."""
    raw_seed = environ.get(SEED_VARIABLE, "").strip()
    if raw_seed:
        try:
            seed = int(raw_seed)
        except ValueError:
            raise pytest.UsageError(f"{SEED_VARIABLE}={raw_seed!r}: expected an integer seed, "
                                    "such as the one pytest's header printed") from None
    else:
        day = today or datetime.datetime.now(datetime.UTC).date()
        seed = int(day.strftime("%Y%m%d"))
    raw_cases = environ.get(CASES_VARIABLE, "").strip().lower()
    if raw_cases in ("", "sample"):
        return Plan(seed, None, every=False)
    if raw_cases == "all":
        return Plan(seed, None, every=True)
    if raw_cases == "rest":
        return Plan(seed, None, every=False, rest=True)
    try:
        cases = int(raw_cases)
    except ValueError:
        cases = 0
    if cases < 1:
        raise pytest.UsageError(f"{CASES_VARIABLE}={raw_cases!r}: expected 'all', 'rest' or a positive number of "
                                "cells per combinatorial test")
    return Plan(seed, cases, every=False)


def _rank(seed: int, nodeid: str) -> bytes:
    return hashlib.sha256(f"{seed}/{nodeid}".encode()).digest()


def _stable(value) -> str | None:
    """A parameter value as text that every process writes alike, or None
    (an object whose text carries its address, such as a lambda)."""
    if isinstance(value, str | int | float | bool) or value is None:
        return repr(value)
    text = str(value)
    return None if " at 0x" in text else text


def _values(item, cover: Collection[str] | None) -> frozenset[tuple[str, str]]:
    params = getattr(getattr(item, "callspec", None), "params", {})
    return frozenset((name, text) for name, value in params.items()
                     if (cover is None or name in cover) and (text := _stable(value)) is not None)


def sample(cells: list, size: int, seed: int, cover: Collection[str] | None = None) -> list:
    """A seeded sample of one test's cells: a cover of every value of the parameters
    named in `cover` (None: all of them), then more cells in the same seeded order
    up to `size`; in collection order."""
    order = sorted(cells, key=lambda item: _rank(seed, item.nodeid))
    kept: list = []
    covered: set[tuple[str, str]] = set()
    for item in order:
        values = _values(item, cover)
        if not values <= covered:
            kept.append(item)
            covered |= values
    chosen = {id(item) for item in kept}
    for item in order:
        if len(kept) >= size:
            break
        if id(item) not in chosen:
            kept.append(item)
            chosen.add(id(item))
    return [item for item in cells if id(item) in chosen]


def select(items: Iterable, plan: Plan) -> tuple[list, list]:
    """(kept, deselected): every item that is not combinatorial, and each combinatorial test's sample
    (under ``plan.rest``, the cells its sample leaves out)."""
    items = list(items)
    if plan.every:
        return items, []
    groups: dict[tuple[str, str], list] = {}
    for item in items:
        marker = item.get_closest_marker(MARKER)
        if marker is not None:
            groups.setdefault((str(item.path), item.originalname), []).append(item)
    kept_ids: set[int] = set()
    for (_, name), cells in groups.items():
        marker = cells[0].get_closest_marker(MARKER)
        size = plan.cases if plan.cases is not None else marker.kwargs.get("cases")
        if not isinstance(size, int) or size < 1:
            raise pytest.UsageError(f"{name}: @pytest.mark.{MARKER} needs cases=K, a positive number of cells")
        cover = marker.kwargs.get("cover")
        kept_ids.update(id(item) for item in sample(cells, size, plan.seed, cover))
    grouped = {id(item) for cells in groups.values() for item in cells}
    if plan.rest:
        kept_ids = grouped - kept_ids
    kept = [item for item in items if id(item) not in grouped or id(item) in kept_ids]
    dropped = [item for item in items if id(item) in grouped and id(item) not in kept_ids]
    return kept, dropped


def configure(config) -> Plan:
    """Reads the plan once and fixes the seed in the environment, so pytest-xdist's workers,
    started after this, choose the same sample."""
    config.addinivalue_line("markers", MARKER_HELP)
    plan = plan_from(os.environ)
    os.environ[SEED_VARIABLE] = str(plan.seed)
    return plan
