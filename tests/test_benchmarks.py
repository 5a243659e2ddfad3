"""The device benchmark runs end to end (tiny sizes, on the CPU). It checks
that the script works and reports sane numbers, never how fast anything is."""

import json
import pathlib
import subprocess
import sys

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "device_bandwidth.py"


def test_device_bandwidth_benchmark_reports_every_column(tmp_path):
    out = tmp_path / "rows.json"
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--device", "cpu", "--log2-sizes", "10", "--dtypes", "float32", "bfloat16",
         "--reps", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "ours/copy" in run.stdout
    rows = json.loads(out.read_text())
    assert [(r["n"], r["dtype"]) for r in rows] == [(1024, "float32"), (1024, "bfloat16")]
    for r in rows:
        for name in ("copy", "silu_grad", "xla_autodiff"):
            assert r[f"{name}_s"] > 0 and r[f"{name}_gbps"] > 0
        assert r["fraction_of_copy"] > 0 and r["speedup_vs_xla"] > 0


def test_device_bandwidth_benchmark_refuses_a_missing_device():
    run = subprocess.run([sys.executable, str(SCRIPT), "--device", "tpu"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 2
    assert "no tpu device" in run.stderr
