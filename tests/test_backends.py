"""Backends: what is compiled and registered, the lowering per platform, and
CPU/GPU agreement when a GPU is present.

CI builds one installation with every backend (CUDA compiled but not run, the
Ascend module linked against the fake CANN of tests/ascend_fake) and sets
JAX_ASCEND_SILU_EXPECT_BACKENDS=cpu,cuda,ascend, so a backend that silently
failed to build fails here.
"""

import importlib.util
import os

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from conftest import device_of

import jax_ascend_silu as jas
from jax_ascend_silu import __main__ as cli

BACKENDS = {"cpu": ("_silu_grad_cpu", "cpu"), "cuda": ("_silu_grad_cuda", "CUDA"), "ascend": ("_silu_grad_ascend", "ASCEND")}


def test_backends_reports_each_backend_as_built():
    status = jas.backends()
    assert set(status) == set(BACKENDS)
    for name, (module, _) in BACKENDS.items():
        built = importlib.util.find_spec(f"jax_ascend_silu.{module}") is not None
        assert status[name]["compiled"] is built, (name, status[name])
        assert isinstance(status[name]["detail"], str) and status[name]["detail"]
    assert status["cpu"]["platforms"] == ["cpu"]
    expected = os.environ.get("JAX_ASCEND_SILU_EXPECT_BACKENDS")
    if expected:  # CI: exactly these were built
        assert {n for n, s in status.items() if s["compiled"]} == set(expected.split(","))


def test_compiled_backends_register_for_their_platform():
    status = jas.backends()
    if status["ascend"]["compiled"]:
        assert status["ascend"]["platforms"] == ["ASCEND"], status["ascend"]
        detail = status["ascend"]["detail"]
        assert detail.startswith("CANN toolkit at ") or "FAKE CANN" in detail
    if status["cuda"]["compiled"]:
        plugin = jas._ffi._jax_cuda_plugin_present()
        assert status["cuda"]["platforms"] == (["CUDA"] if plugin else []), status["cuda"]
        assert "architectures" in status["cuda"]["detail"]
    for name in ("cuda", "ascend"):
        if not status[name]["compiled"]:
            assert status[name]["platforms"] == [] and status[name]["detail"] == "not built"


def test_backends_returns_a_copy():
    jas.backends()["cpu"]["platforms"].append("tampered")
    assert jas.backends()["cpu"]["platforms"] == ["cpu"]


def test_info_prints_every_backend(capsys, monkeypatch):
    monkeypatch.setenv("JAX_ASCEND_SILU_THREADS", "3")
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert "backends:" in out
    assert f"kernel ISA: {jas._silu_grad_cpu.isa()}" in out
    assert "capped at 3 by JAX_ASCEND_SILU_THREADS" in out
    for name, status in jas.backends().items():
        line = next(text for text in out.splitlines() if text.strip().startswith(name + " "))
        assert ("not compiled" not in line) is status["compiled"], line
        for platform in status["platforms"]:
            assert f"registered for {platform}" in line


def _lowered(platform, g, x):
    return jax.jit(jas.silu_grad).trace(g, x).lower(lowering_platforms=(platform,)).as_text()


@pytest.mark.parametrize("platform", ["cuda", "tpu"], ids=["cuda", "other-accelerator"])
def test_accelerator_lowering_has_one_result_and_no_workspace(platform):
    # "cuda" has its own rule; any other accelerator (an Ascend PJRT plugin's
    # platform) gets the default one. Both take the workspace from XLA's
    # scratch allocator inside the handler, so the call has a single result.
    g = jnp.ones((6, 10), jnp.bfloat16)
    x = jnp.ones((10,), jnp.bfloat16)
    text = _lowered(platform, g, x)
    call = next(line for line in text.splitlines() if "stablehlo.custom_call @jax_ascend_silu_silu_grad" in line)
    assert call.rstrip().endswith("-> tensor<6x10xbf16>"), call
    assert "ui8" not in text
    assert "ui8" in _lowered("cpu", g, x)  # the CPU form carries the workspace result


@pytest.mark.parametrize("platform, in_place", [("cuda", True), ("tpu", False)], ids=["cuda", "other-accelerator"])
def test_only_cuda_writes_over_grad_output(platform, in_place):
    # This package's CUDA kernel reads each element before writing it; CANN
    # does not document whether aclnnSiluBackward may, so the default rule
    # (the Ascend plugin's) never aliases.
    g = jnp.ones((6, 10), jnp.float32)
    call = next(line for line in _lowered(platform, g, g).splitlines() if "custom_call @jax_ascend_silu_silu_grad" in line)
    assert ("output_operand_aliases" in call) is in_place, call


def _special_and_random(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 8).astype(np.float32)
    flat = x.reshape(-1)
    specials = [np.inf, -np.inf, np.nan, -0.0, 0.0, -1.2784646, 88.0, -88.0, 1e30, -1e-30]
    flat[: min(len(specials), flat.size)] = specials[: flat.size]
    return x.astype(dtype)


GPU_SHAPES = [
    ((4099,), (4099,)),  # vector path plus a tail
    ((33, 17), (33, 17)),
    ((5, 7), (5, 7)),
    ((7,), (5, 7)),  # grad_output broadcast: strided kernel
    ((), (3, 4)),
    ((2, 1, 3, 1, 2, 1, 2, 3), (2, 3, 2, 3, 2, 3, 2, 3)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shapes", GPU_SHAPES, ids=lambda s: f"g{list(s[0])}-x{list(s[1])}".replace(" ", ""))
def test_gpu_matches_cpu_bit_for_bit(shapes, dtype):
    # The GPU runs silu_grad_math.h's operations in the same order, so results
    # agree bitwise (NaN payloads aside). Shapes keep x unbroadcast: there the
    # CPU kernel precomputes s'(x) in double, which may round the last bit differently.
    gpu = device_of("cuda")
    if gpu is None:
        pytest.skip("no CUDA GPU on this machine")
    g = _special_and_random(dtype, shapes[0], 1)
    x = _special_and_random(dtype, shapes[1], 2)
    on_cpu = np.asarray(jax.jit(jas.silu_grad)(jax.device_put(g, jax.devices("cpu")[0]), jax.device_put(x, jax.devices("cpu")[0])))
    on_gpu = np.asarray(jax.jit(jas.silu_grad)(jax.device_put(g, gpu), jax.device_put(x, gpu)))
    assert on_gpu.shape == on_cpu.shape and on_gpu.dtype == on_cpu.dtype
    nan = np.isnan(on_cpu.astype(np.float32))
    np.testing.assert_array_equal(np.isnan(on_gpu.astype(np.float32)), nan)
    bits = np.uint32 if np.dtype(dtype).itemsize == 4 else np.uint16
    np.testing.assert_array_equal(on_gpu.view(bits)[~nan], on_cpu.view(bits)[~nan])
