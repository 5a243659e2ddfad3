"""Presenting benchmark results: progress, a markdown table, the issue's
goals as measured ratios, JSON and a PNG plot."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass

import numpy as np

from .elementwise import CONTENDERS, bytes_moved
from .timing import Stats


class Progress:
    """tqdm's bar when the ``bench`` extra is installed, plain lines otherwise."""

    def __init__(self, total: int, enabled: bool = True):
        self._bar = None
        self._done, self._total, self._enabled = 0, total, enabled
        if enabled:
            try:
                from tqdm import tqdm
            except ImportError:
                pass
            else:
                self._bar = tqdm(total=total, file=sys.stderr, unit="case", leave=False)

    def step(self, label: str) -> None:
        self._done += 1
        if self._bar is not None:
            self._bar.set_description(label)
            self._bar.update(1)
        elif self._enabled:
            print(f"  [{self._done}/{self._total}] {label}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    return f"{seconds * 1e3:.3g} ms" if seconds < 1 else f"{seconds:.3g} s"


def _ratio(num: Stats | None, den: Stats | None) -> float | None:
    return None if num is None or den is None else num.median / den.median


def _ratio_range(num: Stats | None, den: Stats | None) -> tuple[float, float] | None:
    """The ratio's spread in this run: the slow quartile of the numerator over
    the fast quartile of the denominator, and the other way round."""
    return None if num is None or den is None else (num.q1 / den.q3, num.q3 / den.q1)


def _fmt_ratio(r: float | None) -> str:
    return "" if r is None else f"{r:.2f}x"


def speedups(row: dict[str, Stats]) -> dict[str, float | None]:
    """Ratios of one sweep row, each > 1 when this package is ahead."""
    return {
        "vs XLA": _ratio(row.get("xla"), row.get("ours")),
        "vs XLA, donated": _ratio(row.get("xla_donated"), row.get("ours_donated")),
        "vs PyTorch": _ratio(row.get("torch"), row.get("ours")),
        "of bound, donated": _ratio(row.get("bound"), row.get("ours_donated")),
        "normal / subnormal g": _ratio(row.get("ours"), row.get("ours_subnormal")),
    }


def sweep_table(sweep: dict[str, dict[int, dict[str, Stats]]]) -> str:
    """Markdown: one row per (dtype, size); each cell is the median time and
    the bandwidth it implies (3 arrays moved)."""
    present = [(k, h) for k, h in CONTENDERS if any(k in row for rows in sweep.values() for row in rows.values())]
    ratio_heads = list(speedups({}).keys())
    head = ["dtype", "n"] + [h for _, h in present] + ratio_heads
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for dtype, rows in sweep.items():
        for n, row in sorted(rows.items()):
            cells = [dtype, f"2^{int(np.log2(n))}"]
            for key, _ in present:
                s = row.get(key)
                gbps = None if s is None else bytes_moved(n, dtype) / s.median / 1e9
                cells.append("" if s is None else f"{_time(s.median)} ({gbps:.1f} GB/s)")
            cells += [_fmt_ratio(r) for r in speedups(row).values()]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


@dataclass
class Goal:
    text: str
    measured: float | None
    target: float
    moonshot: float | None = None
    spread: tuple[float, float] | None = None  # from the quartiles; the verdict uses `measured` only

    @property
    def verdict(self) -> str:
        if self.measured is None:
            return "not measured"
        if self.moonshot is not None and self.measured >= self.moonshot:
            return "met (moonshot too)"
        return "met" if self.measured >= self.target else "not met"


def goals(sweep, small, mlp) -> list[Goal]:
    """The goals of the performance issue, as ratios measured in this run."""

    def row(dtype, log2n):
        return sweep.get(dtype, {}).get(2**log2n, {})

    def ratio_and_range(num, den):
        return _ratio(num, den), _ratio_range(num, den)

    def at(dtype, log2n, theirs, ours):
        r = row(dtype, log2n)
        return ratio_and_range(r.get(theirs), r.get(ours))

    def goal(text, measured_and_spread, target, moonshot=None):
        measured, spread = measured_and_spread
        return Goal(text, measured, target, moonshot, spread)

    out = []
    for dtype in ("bfloat16", "float16"):
        out.append(goal(f"{dtype} 2^20: XLA autodiff time / ours", at(dtype, 20, "xla", "ours"), 3, 5))
        out.append(goal(f"{dtype} 2^24 donated: XLA autodiff / ours",
                        at(dtype, 24, "xla_donated", "ours_donated"), 3, 5))
        out.append(goal(f"{dtype} 2^24 fresh output: XLA autodiff / ours", at(dtype, 24, "xla", "ours"), 2))
    out.append(goal("float32 2^20: XLA autodiff / ours", at("float32", 20, "xla", "ours"), 1.5))
    out.append(goal("float32 2^24 fresh output: XLA autodiff / ours", at("float32", 24, "xla", "ours"), 1.2))
    out.append(goal("float32 2^24 donated: donated a+b / ours", at("float32", 24, "bound", "ours_donated"), 0.8))
    out.append(goal("direct call, g alive, float32 2^20: XLA autodiff / ours",
                    at("float32", 20, "xla", "ours_copied"), 1.5, 2))
    out.append(goal("direct call, g alive, float32 2^24: XLA autodiff / ours",
                    at("float32", 24, "xla", "ours_copied"), 1.2, 2))
    for dtype in ("float32", "bfloat16"):
        # within 1.3x of normal inputs: normal / subnormal time >= 1/1.3
        out.append(goal(f"subnormal grad_output, {dtype} 2^20: ours normal / ours subnormal",
                        at(dtype, 20, "ours", "ours_subnormal"), 1 / 1.3))
    for dtype, rows in sweep.items():
        compared = [r for n, r in rows.items() if n >= 2**16 and "torch" in r and "ours" in r]
        worst = min(compared, key=lambda r: r["torch"].median / r["ours"].median, default=None)
        out.append(goal(f"{dtype} every n >= 2^16: PyTorch / ours (worst size)",
                        ratio_and_range(worst["torch"], worst["ours"]) if worst else (None, None), 1.0))
    if small:
        out.append(goal("4096-element float32 calls in a fori_loop: native / ours per call",
                        ratio_and_range(small.get("native"), small.get("ours")), 0.8))
    for dtype, stats in (mlp or {}).items():
        out.append(goal(f"MLP training step, hidden 2048, {dtype}: native / ours",
                        ratio_and_range(stats.get("native"), stats.get("ours")), 1.0))
    return out


def goals_table(goal_list: list[Goal]) -> str:
    lines = ["| goal | measured (median) | quartile range | target | verdict |", "|---|---|---|---|---|"]
    for g in goal_list:
        target = f">= {g.target:g}x" + (f" (moonshot {g.moonshot:g}x)" if g.moonshot else "")
        spread = f"{g.spread[0]:.2f}-{g.spread[1]:.2f}x" if g.spread else ""
        lines.append(f"| {g.text} | {_fmt_ratio(g.measured) or 'n/a'} | {spread} | {target} | {g.verdict} |")
    return "\n".join(lines)


def models_table(small, mlp) -> str:
    lines = ["| program | ours | native | native / ours |", "|---|---|---|---|"]
    if small:
        lines.append(f"| fori_loop of 4096-element float32 calls (per call) | {_time(small['ours'].median)} | "
                     f"{_time(small['native'].median)} | {_fmt_ratio(_ratio(small['native'], small['ours']))} |")
    for dtype, s in (mlp or {}).items():
        lines.append(f"| MLP training step, hidden 2048, {dtype} | {_time(s['ours'].median)} | "
                     f"{_time(s['native'].median)} | {_fmt_ratio(_ratio(s['native'], s['ours']))} |")
    return "\n".join(lines)


MARKDOWN_BEGIN = "<!-- bench table: begin -->"
MARKDOWN_END = "<!-- bench table: end -->"


def write_markdown(path, text: str) -> None:
    """Puts `text` between the bench-table markers of the markdown file at
    `path` (replacing what was there), or appends the marked section when the
    file has none (creating the file if needed)."""
    import pathlib

    p = pathlib.Path(path)
    section = f"{MARKDOWN_BEGIN}\n{text.strip()}\n{MARKDOWN_END}"
    old = p.read_text() if p.exists() else ""
    begin, end = old.find(MARKDOWN_BEGIN), old.find(MARKDOWN_END)
    if begin >= 0 and end > begin:
        new = old[:begin] + section + old[end + len(MARKDOWN_END):]
    else:
        new = (old.rstrip() + "\n\n" if old.strip() else "") + section + "\n"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(new)


def to_json(path, environment, sweep, small, mlp, goal_list) -> None:
    def stats(d):
        return {k: asdict(v) for k, v in d.items()}

    data = {
        "environment": environment,
        "sweep": {dt: {str(n): stats(row) for n, row in rows.items()} for dt, rows in sweep.items()},
        "small_calls": stats(small) if small else None,
        "mlp_step": {dt: stats(s) for dt, s in (mlp or {}).items()},
        "goals": [dict(asdict(g), verdict=g.verdict) for g in goal_list],
    }
    with open(path, "w") as f:
        json.dump(data, f, indent=1)


def plot(path, sweep) -> bool:
    """GB/s against size, one panel per dtype. False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, len(sweep), figsize=(5 * len(sweep), 4), squeeze=False, sharey=True)
    for ax, (dtype, rows) in zip(axes[0], sweep.items()):
        sizes = sorted(rows)
        for key, heading in CONTENDERS:
            pts = [(n, bytes_moved(n, dtype) / rows[n][key].median / 1e9) for n in sizes if key in rows[n]]
            if pts:
                style = "--" if key == "bound" else ("-" if key.startswith("ours") else ":")
                ax.plot(*zip(*pts), style, marker="o", markersize=3, label=heading)
        ax.set_xscale("log", base=2)
        ax.set_title(dtype)
        ax.set_xlabel("elements")
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel("GB/s (2 reads + 1 write)")
    axes[0][-1].legend(fontsize=8)
    fig.suptitle("SiluGrad on CPU: median times of one run")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
