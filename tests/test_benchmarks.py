"""The device benchmark runs end to end (tiny sizes, on the CPU). It checks
that the script works and reports sane numbers, never how fast anything is."""

import json
import pathlib
import subprocess
import sys

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "device_bandwidth.py"


def test_device_bandwidth_benchmark_reports_every_column(tmp_path):
    out = tmp_path / "rows.json"
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--device", "cpu", "--log2-sizes", "10", "--dtypes", "float32", "bfloat16",
         "--reps", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "ours/bound" in run.stdout
    rows = json.loads(out.read_text())["rows"]
    assert [(r["n"], r["dtype"], r["layout"]) for r in rows] == [(1024, "float32", "flat"), (1024, "bfloat16", "flat")]
    _assert_sane(rows)


def _assert_sane(rows):
    for r in rows:
        for name in ("bound", "ours", "xla_autodiff"):
            assert r[f"{name}_s"] > 0 and r[f"{name}_wall_s"] > 0 and r[f"{name}_gbps"] > 0
        assert r["ours_of_bound"] > 0 and r["xla_of_bound"] > 0
        assert r["speedup_vs_xla"] > 0 and r["wall_speedup_vs_xla"] > 0
        assert r["spec_gbps"] is None and r["ours_of_spec"] is None  # a CPU has no known spec
        # bytes over seconds: the flat call moves 3 n elements, the broadcast one 2.25 n, SwiGluGrad's 5 n
        moved = {"flat": 3.0, "root": 3.0, "broadcast": 2.25, "swiglu": 5.0}[r["layout"]] * r["n"] * (
            4 if r["dtype"] == "float32" else 2)
        assert r["bytes"] == moved
        for name in ("bound", "ours", "xla_autodiff"):
            assert abs(r[f"{name}_gbps"] * 1e9 * r[f"{name}_s"] - moved) < 1e-6 * moved, r


def test_the_dry_run_fills_every_row_of_the_gpu_table(tmp_path):
    # .ci/gpu's table, tiny and on the CPU: every layout, both training steps, one table.
    out = tmp_path / "rows.json"
    run = subprocess.run([sys.executable, str(SCRIPT), "--dry-run", "--dtypes", "float16", "--json", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    found = json.loads(out.read_text())
    assert [(r["n"], r["layout"]) for r in found["rows"]] == [
        (1024, "flat"), (4096, "flat"), (1024, "root"), (4096, "root"), (1024, "broadcast"), (4096, "broadcast"),
        (1024, "swiglu"), (4096, "swiglu")]
    _assert_sane(found["rows"])
    assert [(m["model"], m["dtype"]) for m in found["models"]] == [
        ("mlp", "float32"), ("mlp", "bfloat16"), ("swiglu", "float32"), ("swiglu", "bfloat16")]
    assert all(m["ours_s"] > 0 and m["native_s"] > 0 for m in found["models"])
    table = [line for line in run.stdout.splitlines() if line.startswith("|")]
    assert len(table) == 2 + 8 + 4, run.stdout  # heading, rule, SiluGrad and SwiGluGrad rows, steps: one table
    assert table[-1].startswith("| SwiGLU training step (8x16x32) | - | bfloat16 |"), table


def test_device_bandwidth_benchmark_refuses_a_missing_device():
    run = subprocess.run([sys.executable, str(SCRIPT), "--device", "tpu"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 2
    assert "no tpu device" in run.stderr


CPUINFO_AVX512 = "processor\t: 0\nflags\t\t: fpu sse2 avx2 fma avx512f avx512bw\n"
CPUINFO_AVX2 = "processor\t: 0\nflags\t\t: fpu sse2 avx2 fma\n"


@pytest.mark.parametrize(
    "kernel_isa, cpuinfo, xla_flags, noted",
    [
        ("avx2", CPUINFO_AVX512, "", True),  # forced AVX2 against XLA's AVX-512
        ("avx2", CPUINFO_AVX512, "--xla_cpu_max_isa=AVX2", False),
        ("avx2", CPUINFO_AVX2, "", False),  # an AVX2-only processor: both run AVX2
        ("avx512", CPUINFO_AVX512, "", False),
        ("scalar", CPUINFO_AVX512, "", False),
    ],
)
def test_bench_notes_a_kernel_held_to_avx2_against_xla_on_avx512(kernel_isa, cpuinfo, xla_flags, noted):
    from jax_ascend_silu.bench import isa_mismatch

    note = isa_mismatch(kernel_isa, cpuinfo, xla_flags)
    assert (note is not None) == noted
    if noted:
        assert "XLA_FLAGS=--xla_cpu_max_isa=AVX2" in note


@pytest.mark.parametrize("script, args, rows", [
    ("gap_anatomy.py", ["--log2-sizes", "10", "--rounds", "1", "--calls", "1", "--flush-mib", "1"], 2),
    ("idle_gap.py", ["--log2-sizes", "10", "--processes", "1", "--calls", "1", "--one-thread"], 1),
])
def test_after_idle_benchmarks_print_a_row_per_case(script, args, rows):
    # The threads' benchmarks end to end at a tiny size: every case timed, positive times in every cell.
    run = subprocess.run([sys.executable, str(SCRIPT.parent / script), *args],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    head = next(line for line in lines if line.startswith("| n |")).strip("|").split("|")
    table = [line.strip("|").split("|") for line in lines if line.startswith("| 2^10 |")]
    assert len(table) == rows, run.stdout
    for cells in table:
        # "after matmul" is a program's time less the matmul's median: a difference, which noise can make negative
        times = [float(c.split()[0].rstrip("x")) for h, c in zip(head, cells)
                 if h.strip() not in ("n", "contender") and "after matmul" not in h]
        assert len(times) >= 5 and all(t > 0 for t in times), cells
