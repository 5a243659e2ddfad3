"""The kernel's execution paths give one answer: every instruction set,
thread count, fast or general path per lane, a fresh result or one written
over grad_output, and outputs large enough for huge-page advice and several
threads."""

import functools
import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import jax_ascend_silu as jas
import reference
from jax_ascend_silu import _silu_grad_cpu

DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16]

# Values on both sides of the fast path's -33 <= x < 24 and of its finite
# grad_output, plus the specials the general path handles.
EDGES = [0.0, -0.0, 1.0, -1.2784645, 23.99, 24.0, 24.5, -32.99, -33.0, -33.5, 31.99, 32.0, -32.0, 32.5, -32.5,
         64.5, -64.5, -100.0, -260.0,
         np.inf, -np.inf, np.nan, 3e38, -3e38, 1e-40]


def mixed_inputs(n, dtype, seed=0):
    """Normal values with edge values sprinkled in at random positions."""
    rng = np.random.default_rng(seed)
    with np.errstate(over="ignore"):
        g = rng.standard_normal(n)
        x = rng.standard_normal(n) * 4
        for a in (g, x):
            idx = rng.choice(n, size=n // 8, replace=False)
            a[idx] = rng.choice(EDGES, size=idx.size)
        return g.astype(dtype), x.astype(dtype)


_CHILD = """
import sys, numpy as np, ml_dtypes, jax, jax.numpy as jnp
sys.path[:] = [p for p in sys.path if p not in ("", {root!r})]
sys.path.insert(0, {tests!r})
import jax_ascend_silu as jas
from test_kernel_paths import mixed_inputs
out = []
for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
    for n in (5003, 1 << 18):
        g, x = mixed_inputs(n, dtype)
        out.append(np.asarray(jax.jit(jas.silu_grad)(g, x)).view(np.uint8))
        # SwiGluGrad: gate x, up g, grad_output g reversed.
        for r in jax.jit(jas.silu_mul_grad)(g[::-1], x, g):
            out.append(np.asarray(r).view(np.uint8))
np.save(sys.argv[1], np.concatenate(out))
"""


def _run_child(tmp_path, name, **env):
    path = tmp_path / f"{name}.npy"
    tests = os.path.dirname(os.path.abspath(__file__))
    code = _CHILD.format(root=os.path.dirname(tests), tests=tests)
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, env=dict(os.environ, **env),
                   cwd=tmp_path, timeout=300)
    return np.load(path)


def test_every_isa_and_thread_count_gives_the_same_bits(tmp_path):
    baseline = _run_child(tmp_path, "default")
    variants = [("isa-" + isa, {"JAX_ASCEND_SILU_ISA": isa}) for isa in _silu_grad_cpu.supported_isas()]
    variants += [("threads-1", {"JAX_ASCEND_SILU_THREADS": "1"}), ("threads-5", {"JAX_ASCEND_SILU_THREADS": "5"})]
    for name, env in variants:
        np.testing.assert_array_equal(_run_child(tmp_path, name, **env), baseline, err_msg=name)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_each_lane_ignores_its_neighbours(dtype):
    # A vector mixing fast-path and general-path lanes gives every lane the
    # bits it gets alone (one element, padded to a vector of its own).
    g, x = mixed_inputs(203, dtype, seed=1)
    together = np.asarray(jax.jit(jas.silu_grad)(g, x))
    one = jax.jit(jas.silu_grad)
    alone = np.concatenate([np.asarray(one(g[i:i + 1], x[i:i + 1])) for i in range(g.size)])
    np.testing.assert_array_equal(together.view(np.uint8), alone.view(np.uint8))
    err = reference.ulp_error(together, reference.silu_grad(g, x), dtype)
    assert err.max() <= reference.MAX_ULP[np.dtype(dtype)]


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16], ids=lambda d: np.dtype(d).name)
def test_large_output_on_several_threads(dtype):
    # 2^22 elements: a result above the huge-page advice threshold, split
    # into per-thread segments.
    g, x = mixed_inputs(1 << 22, dtype, seed=2)
    out = np.asarray(jax.jit(jas.silu_grad)(g, x))
    sample = np.s_[::61]
    err = reference.ulp_error(out[sample], reference.silu_grad(g[sample], x[sample]), dtype)
    assert err.max() <= reference.MAX_ULP[np.dtype(dtype)]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_in_place_fresh_and_copied_results_have_the_same_bits(dtype):
    g, x = mixed_inputs(1 << 20, dtype, seed=3)
    g_before = g.copy()
    in_place = functools.partial(jas.silu_grad, overwrite_grad_output=True)
    fresh_fn = jax.jit(jas.silu_grad)
    donated_fn = jax.jit(in_place, donate_argnums=0)
    copied_fn = jax.jit(in_place)  # writes over grad_output, which is not donated: XLA copies it
    args = (jnp.asarray(g), jnp.asarray(x))
    assert " copy(" not in fresh_fn.lower(*args).compile().as_text()
    assert " copy(" not in donated_fn.lower(*args).compile().as_text()
    assert " copy(" in copied_fn.lower(*args).compile().as_text()
    kept = jnp.asarray(g)
    results = [fresh_fn(*args), copied_fn(kept, args[1]), donated_fn(jnp.asarray(g), args[1])]
    for r in results[1:]:
        np.testing.assert_array_equal(np.asarray(r).view(np.uint8), np.asarray(results[0]).view(np.uint8))
    np.testing.assert_array_equal(np.asarray(kept).view(np.uint8), g_before.view(np.uint8))  # left intact


def test_bench_command_runs_and_writes_json(tmp_path):
    cmd = [sys.executable, "-m", "jax_ascend_silu", "bench", "--quick", "--sizes", "10", "--dtypes", "float32",
           "--only", "sweep", "loop", "--repeats", "1", "--no-progress", "--out", str(tmp_path)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "| float32 | 2^10 |" in done.stdout and "Goals" in done.stdout
    data = json.loads((tmp_path / "silu_grad_bench.json").read_text())
    row = data["sweep"]["float32"][str(1 << 10)]
    assert {"ours", "ours_donated", "ours_copied", "xla", "xla_donated", "bound"} <= set(row)
    # what programs see: each call after an idle moment, and after a matmul in one program
    assert {"ours_gap", "xla_gap", "ours_program", "xla_program"} <= set(row)
    assert "The headline is the first pair: each call after 2 ms idle" in done.stdout
    assert any(g["text"].startswith("float32 2^20 after 2 ms idle") for g in data["goals"])
    assert all(s["median"] > 0 and s["count"] >= 1 for s in row.values())
    assert data["small_calls"]["ours"]["median"] > 0
    assert any(g["text"].startswith("4096-element") for g in data["goals"])
