"""The CUDA backend on a GPU: its registration, and its results bit for bit
against the CPU kernel's, NaN bits included (SiluGrad's, then SwiGluGrad's).

Every test here needs a CUDA GPU (the `gpu` fixture of conftest.py): without
one it skips, or fails under JAX_ASCEND_SILU_REQUIRE_GPU=1 (.ci/gpu sets it);
the last test proves that in a child process, on any machine. The GPU runs
silu_grad_math.h's operations in the CPU kernel's order, so the two agree
bitwise, except where x is broadcast: the CPU then evaluates s'(x) once per x,
in double (README, Backends), and the GPU once per element as for a full x.
"""

import functools
import os
import pathlib
import re
import subprocess
import sys

import jax
import ml_dtypes
import numpy as np
import pytest
from conftest import REQUIRE_GPU_VARIABLE

import jax_ascend_silu as jas
from reference import assert_silu_grad, silu_derivative, ulp_error

# Every test here depends on the backends built (.ci/accelerators runs them with every one).
pytestmark = pytest.mark.backends

ROOT = pathlib.Path(__file__).resolve().parent.parent
HALVES = [np.float16, ml_dtypes.bfloat16]
DTYPES = [np.float32, *HALVES]
BITS = {2: np.uint16, 4: np.uint32}
_name = lambda d: np.dtype(d).name  # noqa: E731


def _bits(a) -> np.ndarray:
    a = np.asarray(a)
    return a.view(BITS[a.dtype.itemsize])


def _on(device, g, x, **kwargs):
    fn = jax.jit(functools.partial(jas.silu_grad, **kwargs))
    return np.asarray(fn(jax.device_put(g, device), jax.device_put(x, device)))


def assert_same_bits(gpu, g, x, **kwargs) -> np.ndarray:
    """The GPU's result equals the CPU kernel's bit for bit; returns it."""
    on_cpu = _on(jax.devices("cpu")[0], g, x, **kwargs)
    on_gpu = _on(gpu, g, x, **kwargs)
    assert on_gpu.shape == on_cpu.shape and on_gpu.dtype == on_cpu.dtype
    differ = np.flatnonzero(_bits(on_gpu) != _bits(on_cpu))
    if differ.size:
        i = differ[:8]
        gb, xb = np.broadcast_to(g, on_cpu.shape).reshape(-1), np.broadcast_to(x, on_cpu.shape).reshape(-1)
        raise AssertionError(
            f"{differ.size} of {on_cpu.size} results differ from the CPU's; first at flat index {i.tolist()}: "
            f"g bits {[hex(v) for v in _bits(gb[i])]}, x bits {[hex(v) for v in _bits(xb[i])]}, "
            f"GPU {[hex(v) for v in _bits(on_gpu.reshape(-1)[i])]}, "
            f"CPU {[hex(v) for v in _bits(on_cpu.reshape(-1)[i])]}")
    return on_gpu


def test_the_gpu_has_the_cuda_handler_registered(gpu):
    status = jas.backends()["cuda"]
    assert status["compiled"], "the CUDA module was not built (-Ccmake.define.JAX_ASCEND_SILU_CUDA=ON)"
    assert status["platforms"] == ["CUDA"], status
    assert status["registration_reached"] is True, status
    assert status["registration"] == f"yes: a SiluGrad call compiles for {gpu}", status


def _every_half(dtype) -> np.ndarray:
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dtype)


def _half_grads(dtype, kind, rng) -> np.ndarray:
    """grad_output for the 65536 x of a half type, of one class."""
    n = 1 << 16
    top = float(ml_dtypes.finfo(dtype).max)
    tiny = float(ml_dtypes.finfo(dtype).smallest_subnormal)
    if kind == "one":
        g = np.ones(n)
    elif kind == "random":
        g = rng.standard_normal(n) * 4
    elif kind == "tiny":  # subnormal and smallest normal grad_output: results round to subnormals or 0
        g = rng.integers(1, 2048, n) * tiny * rng.choice([-1, 1], n)
    elif kind == "near-max":  # float16: |g| * s'(x) crosses 65520, where rounding goes to inf
        g = top * rng.uniform(0.85, 1.0, n) * rng.choice([-1, 1], n)
    elif kind == "specials":
        g = rng.choice([np.inf, -np.inf, np.nan, 0.0, -0.0, top, -top, tiny], n)
    elif kind == "every-bit-pattern":  # all 65536 g, against the x in shuffled order
        return rng.permutation(_every_half(dtype))
    else:
        raise ValueError(kind)
    return g.astype(dtype)


@pytest.mark.parametrize("kind", ["one", "random", "tiny", "near-max", "specials", "every-bit-pattern"])
@pytest.mark.parametrize("dtype", HALVES, ids=_name)
def test_every_half_input_matches_the_cpu_bit_for_bit(gpu, dtype, kind):
    x = _every_half(dtype)
    g = _half_grads(dtype, kind, np.random.default_rng(sum(map(ord, kind))))
    out = assert_same_bits(gpu, g, x)
    nan = np.isnan(out.astype(np.float32))
    assert set(_bits(out[nan]).tolist()) <= {0x7E00 if dtype == np.float16 else 0x7FC0}, "the CPU's quiet NaN"
    finite = np.isfinite(g.astype(np.float32)) & np.isfinite(x.astype(np.float32))
    assert_silu_grad(out[finite], g[finite], x[finite], dtype)


def test_the_float16_overflow_edge_rounds_as_on_the_cpu(gpu):
    # s'(x) peaks at 1.0998 (x = 2.3994): every float16 x from 1 to 4 against
    # the 64 largest finite g, whose products straddle 65520 (65504 below, inf above).
    x = np.arange(1.0, 4.0, 2.0**-9).astype(np.float16)
    top = np.arange(0x7BFF - 63, 0x7BFF + 1, dtype=np.uint16).view(np.float16)
    g, x = np.meshgrid(np.concatenate([top, -top]), x)
    out = assert_same_bits(gpu, g, x)
    exact = np.abs(g.astype(np.float64) * silu_derivative(x.astype(np.float64)))
    assert np.isinf(out[exact >= 65521]).all() and np.isfinite(out[exact < 65519]).all()
    assert np.isinf(out).any() and np.isfinite(out).any()


def _float32_x(rng, n) -> np.ndarray:
    """float32 x over the whole range: every 4099th bit pattern (NaNs and
    infinities included), plus the region around the root and |x| < 100."""
    strided = np.arange(0, 1 << 32, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)
    dense = np.concatenate([rng.uniform(-1.4, -1.15, n), rng.uniform(-100, 100, n)]).astype(np.float32)
    specials = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, -1.2784646, 88.0, -88.0, -87.5, -150.0, -250.0,
                         -251.0, 1e30, -1e-30, 1e-45], np.float32)
    return np.concatenate([strided, dense, specials])


@pytest.mark.parametrize("kind, scale", [
    ("unit", 1.0),
    ("small", 2.0**-50),  # 0 < |g| < 2^-43: the CPU finishes these in double
    ("subnormal", 2.0**-135),
    ("smallest-subnormal", 2.0**-149),
    ("huge", 2.0**127),  # near float32's max: the result overflows for s'(x) > 1 only
    ("max", float(np.finfo(np.float32).max)),
], ids=lambda v: v if isinstance(v, str) else "")
def test_float32_edges_match_the_cpu_bit_for_bit(gpu, kind, scale):
    rng = np.random.default_rng(len(kind))
    x = _float32_x(rng, 1 << 16)
    magnitude = scale * (rng.uniform(0.5, 1.0, x.size) if kind != "smallest-subnormal" else 1.0)
    assert_same_bits(gpu, (rng.choice([-1.0, 1.0], x.size) * magnitude).astype(np.float32), x)


@pytest.mark.parametrize("dtype", DTYPES, ids=_name)
def test_writing_over_a_donated_grad_output_matches_the_cpu(gpu, dtype):
    rng = np.random.default_rng(3)
    g = (rng.standard_normal(1 << 20 | 5) * 3).astype(dtype)
    x = (rng.standard_normal(g.size) * 6).astype(dtype)
    expected = _on(jax.devices("cpu")[0], g, x)
    g_gpu, x_gpu = jax.device_put(g, gpu), jax.device_put(x, gpu)
    compiled = jax.jit(functools.partial(jas.silu_grad, overwrite_grad_output=True),
                       donate_argnums=0).lower(g_gpu, x_gpu).compile()
    hlo = compiled.as_text()
    assert "input_output_alias={ {}: (0, {}" in hlo and " copy(" not in hlo, "the result is grad_output's buffer"
    assert compiled.memory_analysis().alias_size_in_bytes == g.nbytes
    out = compiled(g_gpu, x_gpu)
    assert g_gpu.is_deleted(), "grad_output was donated"
    np.testing.assert_array_equal(_bits(np.asarray(out)), _bits(expected))


def _patterns(dtype, n, multiplier, ones=False) -> np.ndarray:
    """n values of `dtype` from a 2^24-long block of hashed bit patterns,
    repeated: every class of input (NaN and infinities included), made in a
    second or two. With ones=True, the significands of 1 <= |v| < 2 instead."""
    bits = np.arange(1 << 24, dtype=np.uint32) * np.uint32(multiplier)  # wraps: a bijection on 2^32
    if ones:
        bits = (bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F800000)
    if np.dtype(dtype).itemsize == 2:
        bits = (bits >> np.uint32(16)).astype(np.uint16)
    return np.resize(bits.view(np.float32) if bits.dtype == np.uint32 else bits.view(dtype), n)


@pytest.mark.parametrize("dtype, n", [
    pytest.param(np.float32, (1 << 30) + 5, id="float32-2^30+5"),
    pytest.param(ml_dtypes.bfloat16, (1 << 31) + 9, id="bfloat16-2^31+9", marks=pytest.mark.huge),
])
def test_sizes_past_one_grid_take_the_grid_stride_loop(gpu, dtype, n):
    # kernel/cuda/grid.h launches at most 2^20 blocks of 256 threads, one
    # 16-byte vector each (4 float32, 8 halves), so past 2^30 float32 and 2^31
    # halves every thread loops; the odd tail takes the scalar path, and past
    # 2^31 elements the indices need 64 bits.
    assert_same_bits(gpu, _patterns(dtype, n, 0x9E3779B1, ones=True), _patterns(dtype, n, 0x85EBCA77))


GPU_SHAPES = [
    ((4099,), (4099,)),  # vector path plus a tail
    ((33, 17), (33, 17)),
    ((5, 7), (5, 7)),
    ((7,), (5, 7)),  # grad_output broadcast: strided kernel
    ((), (3, 4)),
    ((2, 1, 2, 1, 2, 1, 2, 3), (2, 3, 2, 3, 2, 3, 2, 3)),
]


def _special_and_random(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 8).astype(np.float32)
    flat = x.reshape(-1)
    specials = [np.inf, -np.inf, np.nan, -0.0, 0.0, -1.2784646, 88.0, -88.0, 1e30, -1e-30]
    flat[: min(len(specials), flat.size)] = specials[: flat.size]
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=_name)
@pytest.mark.parametrize("shapes", GPU_SHAPES, ids=lambda s: f"g{list(s[0])}-x{list(s[1])}".replace(" ", ""))
def test_shapes_without_a_broadcast_x_match_the_cpu_bit_for_bit(gpu, shapes, dtype):
    assert_same_bits(gpu, _special_and_random(dtype, shapes[0], 1), _special_and_random(dtype, shapes[1], 2))


@pytest.mark.parametrize("dtype", DTYPES, ids=_name)
@pytest.mark.parametrize("g_shape, x_shape", [((4, 4099), (1, 4099)), ((6, 5, 7), (5, 1)), ((3, 8), ())],
                         ids=["vmap-over-4", "inner-and-outer", "scalar-x"])
def test_a_broadcast_x_is_the_documented_exception(gpu, g_shape, x_shape, dtype):
    # The GPU computes s'(x) per element, as for x written out in full, so it
    # equals the CPU on the materialised x bit for bit; the CPU on the broadcast
    # x rounds s'(x) from double, within the accuracy bound of both.
    g = _special_and_random(dtype, g_shape, 5)
    x = _special_and_random(dtype, x_shape, 6)
    full = np.ascontiguousarray(np.broadcast_to(x, g_shape))
    on_gpu = _on(gpu, g, x)
    np.testing.assert_array_equal(_bits(on_gpu), _bits(_on(jax.devices("cpu")[0], g, full)))
    cpu_broadcast = _on(jax.devices("cpu")[0], g, x)
    finite = np.isfinite(cpu_broadcast.astype(np.float32))
    np.testing.assert_array_equal(np.isfinite(on_gpu.astype(np.float32)), finite)
    reference = silu_derivative(full.astype(np.float64)) * g.astype(np.float64)
    for result in (on_gpu, cpu_broadcast):
        err = ulp_error(result[finite], reference[finite], dtype)
        assert err.size == 0 or err.max() <= (4.0 if dtype == np.float32 else 1.0), err.max()


# ---- SwiGluGrad ---------------------------------------------------------
# The CUDA kernel runs swiglu_grad_math.h's operations in the CPU kernel's
# order, with no broadcast exception (the call's operands are always full), so
# every result must equal the CPU's bit for bit, NaN bits included.

SWIGLU_TARGET = "jax_ascend_silu_swiglu_grad"


def _swiglu_on(device, fn, *operands):
    """fn(*operands) jitted on `device`, with the custom call in its HLO; NumPy results."""
    placed = [jax.device_put(o, device) for o in operands]
    lowered = jax.jit(fn).lower(*placed)
    assert SWIGLU_TARGET in lowered.as_text(), f"no {SWIGLU_TARGET} custom call on {device}"
    return [np.asarray(r) for r in jax.tree_util.tree_leaves(lowered.compile()(*placed))]


def assert_swiglu_same_bits(gpu, fn, *operands) -> list:
    """fn's results on the GPU equal the CPU's bit for bit; returns the GPU's."""
    on_cpu = _swiglu_on(jax.devices("cpu")[0], fn, *operands)
    on_gpu = _swiglu_on(gpu, fn, *operands)
    for k, (c, d) in enumerate(zip(on_cpu, on_gpu, strict=True)):
        assert c.shape == d.shape and c.dtype == d.dtype
        differ = np.flatnonzero(_bits(d) != _bits(c))
        if differ.size:
            i = differ[:8]
            inputs = [np.asarray(o).reshape(-1) for o in operands]
            raise AssertionError(
                f"result {k}: {differ.size} of {c.size} differ from the CPU's; first at flat index {i.tolist()}: "
                f"GPU {[hex(v) for v in _bits(d.reshape(-1)[i])]}, CPU {[hex(v) for v in _bits(c.reshape(-1)[i])]}"
                + "".join(f", operand {j} bits {[hex(v) for v in _bits(o[i])]}" for j, o in enumerate(inputs)
                          if o.size == c.size))
    return on_gpu


def _pair(g, a, b):
    return jas.silu_mul_grad(g, a, b)


def test_the_cuda_module_registers_swiglu_grad(gpu):
    import importlib

    module = importlib.import_module("jax_ascend_silu._silu_grad_cuda")
    assert SWIGLU_TARGET in module.registrations(), module.registrations()
    assert module.kernel_load_error() == "", module.kernel_load_error()


@pytest.mark.parametrize("kind", ["random", "specials", "every-bit-pattern"])
@pytest.mark.parametrize("dtype", HALVES, ids=_name)
def test_swiglu_every_half_a_matches_the_cpu_bit_for_bit(gpu, dtype, kind):
    rng = np.random.default_rng(sum(map(ord, kind)) + 1)
    a = _every_half(dtype)
    g = _half_grads(dtype, kind, rng)
    b = _half_grads(dtype, kind, np.random.default_rng(rng.integers(1 << 30)))
    da, db = assert_swiglu_same_bits(gpu, _pair, g, a, b)
    for r in (da, db):
        nan = np.isnan(r.astype(np.float32))
        assert set(_bits(r[nan]).tolist()) <= {0x7E00 if dtype == np.float16 else 0x7FC0}, "the CPU's quiet NaN"


@pytest.mark.parametrize("kind, scale", [
    ("unit", 1.0),
    ("small", 2.0**-50),
    ("subnormal", 2.0**-135),
    ("huge", 2.0**100),  # g*B past kSwiGluHuge: the general path
    ("max", float(np.finfo(np.float32).max)),
], ids=lambda v: v if isinstance(v, str) else "")
def test_swiglu_float32_edges_match_the_cpu_bit_for_bit(gpu, kind, scale):
    rng = np.random.default_rng(len(kind) + 7)
    a = _float32_x(rng, 1 << 16)
    g = (rng.choice([-1.0, 1.0], a.size) * scale * rng.uniform(0.5, 1.0, a.size)).astype(np.float32)
    b = (rng.standard_normal(a.size) * 4).astype(np.float32)
    assert_swiglu_same_bits(gpu, _pair, g, a, b)
    assert_swiglu_same_bits(gpu, _pair, b, a, g)  # the scale on B instead


@pytest.mark.parametrize("dtype", DTYPES, ids=_name)
@pytest.mark.parametrize("x_shape, axis", [
    ((4099, 2), -1),  # rows of one element
    ((33, 2 * 17), -1),
    ((2 * 33, 17), 0),  # one dense run
    ((3, 2 * 5, 7), 1),
    ((2, 3, 2 * 129), 2),
    ((2, 1, 2, 1, 2, 1, 2, 6), -1),
], ids=lambda v: str(v).replace(" ", ""))
def test_swiglu_packed_matches_the_cpu_bit_for_bit(gpu, x_shape, axis, dtype):
    x = _special_and_random(dtype, x_shape, 11)
    g_shape = list(x_shape)
    g_shape[axis] //= 2
    g = _special_and_random(dtype, tuple(g_shape), 12)
    (out,) = assert_swiglu_same_bits(gpu, functools.partial(jas.swiglu_grad, axis=axis), g, x)
    assert out.shape == x.shape


@pytest.mark.parametrize("dtype", DTYPES, ids=_name)
@pytest.mark.parametrize("shape", [(), (4099,), (33, 17), (2, 3, 4, 5)], ids=lambda s: str(list(s)).replace(" ", ""))
def test_swiglu_pair_matches_the_cpu_bit_for_bit(gpu, shape, dtype):
    g, a, b = (_special_and_random(dtype, shape, seed) for seed in (21, 22, 23))
    assert_swiglu_same_bits(gpu, _pair, g, a, b)


def test_swiglu_large_packed_call_takes_the_grid_stride_loop(gpu):
    # 2^25 elements (2^24 rows of 2 + 2): far past the persistent grid of one
    # element per thread and pass, so every thread goes round many times.
    n = 1 << 24
    x = _patterns(np.float32, 4 * n, 0x9E3779B1, ones=True).reshape(n, 4)
    g = _patterns(np.float32, 2 * n, 0x85EBCA77).reshape(n, 2)
    assert_swiglu_same_bits(gpu, functools.partial(jas.swiglu_grad, axis=-1), g, x)


def test_requiring_a_gpu_where_there_is_none_fails_every_gpu_test():
    # In a child process that sees no GPU (JAX_PLATFORMS=cpu, as conftest.py
    # gives every child): each GPU test skips, and fails under REQUIRE_GPU=1.
    selection = ["tests/test_gpu.py", "tests/test_silu_grad.py", "-k", "cuda or gpu", "--deselect",
                 f"tests/test_gpu.py::{sys._getframe().f_code.co_name}", "-p", "no:cacheprovider", "-q"]
    env = {k: v for k, v in os.environ.items() if k != REQUIRE_GPU_VARIABLE}
    env["JAX_PLATFORMS"] = "cpu"

    def run(**extra):
        return subprocess.run([sys.executable, "-m", "pytest", *selection], cwd=ROOT, env={**env, **extra},
                              capture_output=True, text=True, timeout=600, check=False)

    def counts(out):
        return {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|skipped|error)", out.splitlines()[-1])}

    relaxed, required = run(), run(**{REQUIRE_GPU_VARIABLE: "1"})
    skipped = counts(relaxed.stdout)  # a few selected tests lower for CUDA without a GPU, and pass
    assert relaxed.returncode == 0 and skipped.get("skipped", 0) > 40 and set(skipped) <= {"skipped", "passed"}, \
        relaxed.stdout[-3000:]
    failed = counts(required.stdout)  # failed in the fixtures, at set-up: pytest counts them as errors
    assert required.returncode == 1, required.stdout[-3000:]
    assert failed.get("failed", 0) + failed.get("error", 0) == skipped["skipped"], (failed, skipped)
    assert failed.get("passed") == skipped.get("passed") and set(failed) <= {"failed", "error", "passed"}, \
        (failed, skipped)
    assert (f"{REQUIRE_GPU_VARIABLE}=1, but jax finds no cuda device on this machine (jax.devices('cuda') fails; "
            "is jax's CUDA plugin installed") in required.stdout, required.stdout[-3000:]
