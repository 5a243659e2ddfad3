"""``python -m jax_ascend_silu bench``: SiluGrad against XLA autodiff, PyTorch
and a bandwidth bound, all measured in one run, with the performance goals
checked as ratios of that run.

The optional ``bench`` extra adds a progress bar (tqdm) and the plot
(matplotlib); PyTorch is compared when it is installed.
"""

from __future__ import annotations

import os
import pathlib
import platform
import sys
import time

import jax
import numpy as np

from ..operands import DTYPES as _DTYPES
from . import elementwise, models, report

DTYPES = tuple(_DTYPES)
FULL_SIZES = tuple(range(10, 27, 2))  # 2^10 .. 2^26
QUICK_SIZES = (12, 16, 20, 24)
SWEEP_HEADING = ("SiluGrad, median time (bandwidth); ratios > 1 favour this package. The headline is the first "
                 "pair: each call after 2 ms idle, as a program calling once per step sees it")


def _read(path) -> str | None:
    try:
        return pathlib.Path(path).read_text().strip()
    except OSError:
        return None


def cpu_name(cpuinfo: str | None = None) -> str:
    """The processor's model name, as /proc/cpuinfo gives it: every figure names it."""
    if cpuinfo is None:
        cpuinfo = _read("/proc/cpuinfo") or ""
    return next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")),
                platform.processor() or "unknown")


def settings_line() -> str:
    """The processor and the settings that change a CPU figure, for a benchmark's first line."""
    return (f"{cpu_name()}, {os.cpu_count()} cores; JAX_ASCEND_SILU_ISA={os.environ.get('JAX_ASCEND_SILU_ISA', '')} "
            f"JAX_ASCEND_SILU_THREADS={os.environ.get('JAX_ASCEND_SILU_THREADS', '')} "
            f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')}")


def environment() -> dict:
    from .. import __version__
    from .._ffi import ext  # the compiled CPU module

    cpuinfo = _read("/proc/cpuinfo") or ""
    cpu = cpu_name(cpuinfo)
    try:
        import torch

        torch_info = f"{torch.__version__} ({torch.get_num_threads()} threads)"
    except ImportError:
        torch_info = None
    return {
        "jax_ascend_silu": __version__,
        "jax": jax.__version__,
        "python": platform.python_version(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "kernel_isa": ext.isa(),
        "isa_note": isa_mismatch(ext.isa(), cpuinfo, os.environ.get("XLA_FLAGS", "")),
        "transparent_hugepage": _read("/sys/kernel/mm/transparent_hugepage/enabled"),
        "torch": torch_info,
        "env": {k: v for k, v in os.environ.items() if k.startswith(("JAX_ASCEND_SILU_", "MALLOC_", "XLA_FLAGS"))},
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "load_average_before": os.getloadavg()[0],
    }


def isa_mismatch(kernel_isa: str, cpuinfo: str, xla_flags: str) -> str | None:
    """A note when the kernel is held to AVX2 (JAX_ASCEND_SILU_ISA) on a
    processor with AVX-512 and XLA is not: XLA's fusions then use AVX-512,
    and the ratios compare two instruction sets, not two implementations."""
    flags = {f for line in cpuinfo.splitlines() if line.startswith("flags") for f in line.split(":", 1)[1].split()}
    if kernel_isa != "avx2" or "avx512f" not in flags or "--xla_cpu_max_isa" in xla_flags:
        return None
    return ("note: the kernel runs its AVX2 path on a processor with AVX-512, which XLA's fusions use; "
            "XLA_FLAGS=--xla_cpu_max_isa=AVX2 holds XLA to AVX2 as well")


def markdown_section(env, sweep, small, mlp, goal_list) -> str:
    """The run's tables as markdown, with the machine and its load."""
    parts = [f"Measured {env['date']}: jax_ascend_silu {env['jax_ascend_silu']}, jax {env['jax']}, "
             f"{env['cpu']}, {env['cores']} cores, kernel ISA {env['kernel_isa']}; load average "
             f"{env['load_average_before']:.2f} before, {env['load_average_after']:.2f} after "
             "(other processes share the machine: ratios within one run are what to read)."]
    if sweep:
        heading = SWEEP_HEADING
        parts.append(heading + "\n\n" + report.sweep_table(sweep))
    if small or mlp:
        parts.append(report.models_table(small, mlp))
    parts.append("Goals\n\n" + report.goals_table(goal_list))
    return "\n\n".join(parts)


def _markdown_problem(path) -> str | None:
    """Why the tables cannot go into the markdown file at ``path``, or None."""
    p = pathlib.Path(path)
    try:
        text = p.read_text()
    except OSError as err:
        return f"cannot read it ({err.strerror})"
    begin, end = text.find(report.MARKDOWN_BEGIN), text.find(report.MARKDOWN_END)
    if begin < 0 or end < begin:
        return (f"it has no {report.MARKDOWN_BEGIN} ... {report.MARKDOWN_END} markers; add the two lines "
                "where the tables should go")
    return None


def run(options) -> int:
    """Runs the benchmarks the options ask for, prints the tables, writes
    JSON (and the plot) under options.out. Returns a process exit code."""
    sizes = [2**k for k in (options.sizes or (QUICK_SIZES if options.quick else FULL_SIZES))]
    dtypes = options.dtypes or DTYPES
    repeats = options.repeats or (5 if options.quick else 15)
    budget = 0.3 if options.quick else 1.0  # seconds of samples per case, beyond `repeats`
    parts = set(options.only or ("sweep", "loop", "mlp"))
    markdown = getattr(options, "markdown", None)
    if markdown:
        problem = _markdown_problem(markdown)
        if problem:  # said before the run, not after minutes of it
            print(f"bench: --markdown {markdown}: {problem}", file=sys.stderr)
            return 2
    env = environment()
    print(f"jax_ascend_silu {env['jax_ascend_silu']} | jax {env['jax']} | {env['cpu']} | {env['cores']} cores | "
          f"kernel ISA {env['kernel_isa']} | THP {env['transparent_hugepage']} | "
          f"PyTorch {env['torch'] or 'not installed'}")
    if env["isa_note"]:
        print(env["isa_note"])

    cases = (len(sizes) * len(dtypes) if "sweep" in parts else 0) + ("loop" in parts) + (2 if "mlp" in parts else 0)
    progress = report.Progress(cases, enabled=not options.no_progress)
    sweep: dict = {}
    mlp: dict = {}
    small = None
    try:
        if "sweep" in parts:
            for dtype in dtypes:
                sweep[dtype] = {}
                for n in sizes:
                    sweep[dtype][n] = elementwise.run_size(n, _DTYPES[dtype], repeats, budget)
                    progress.step(f"{dtype} 2^{int(np.log2(n))}")
        if "loop" in parts:
            small = models.small_calls(4096, 500, repeats, budget)
            progress.step("fori_loop")
        if "mlp" in parts:
            for dtype in ("float32", "bfloat16"):
                mlp[dtype] = models.mlp_step(2048, 128, getattr(jax.numpy, dtype), max(5, repeats // 2), budget)
                progress.step(f"MLP {dtype}")
    finally:
        progress.close()

    env["load_average_after"] = os.getloadavg()[0]
    goal_list = report.goals(sweep, small, mlp, env["kernel_isa"])
    if sweep:
        print(f"\n{SWEEP_HEADING}\n")
        print(report.sweep_table(sweep))
    if small or mlp:
        print("\n" + report.models_table(small, mlp))
    print("\nGoals\n\n" + report.goals_table(goal_list))

    if getattr(options, "markdown", None):
        report.write_markdown(options.markdown, markdown_section(env, sweep, small, mlp, goal_list))
        print(f"table written into {options.markdown}")

    out = pathlib.Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    report.to_json(out / "silu_grad_bench.json", env, sweep, small, mlp, goal_list)
    written = [out / "silu_grad_bench.json"]
    if sweep:
        if report.plot(out / "silu_grad_bench.png", sweep):
            written.append(out / "silu_grad_bench.png")
        else:
            print("(no plot: install the bench extra, pip install 'jax_ascend_silu[bench]')")
    print(f"\nload average (1 min) {env['load_average_before']:.2f} before, {env['load_average_after']:.2f} after")
    print("wrote " + ", ".join(str(p) for p in written))
    return 0
