"""Sharded execution on 8 CPU devices: the custom call runs on each shard, and
the compiled programs contain no collective (no all-gather, all-reduce,
all-to-all, collective-permute or reduce-scatter).

tests/conftest.py provides the 8 devices; without them these tests fail.
"""

import math
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

import jax_ascend_silu as jas
import reference
from checks import HLO_CALL

COLLECTIVES = ("all-gather", "all-reduce", "all-to-all", "collective-permute", "reduce-scatter")


def _devices():
    devices = jax.devices("cpu")
    assert len(devices) >= 8, (
        f"the sharding tests need 8 devices, found {len(devices)}: tests/conftest.py sets "
        "jax_num_cpu_devices=8 (XLA_FLAGS=--xla_force_host_platform_device_count=8 also works)")
    return np.array(devices[:8]).reshape(2, 4)


@pytest.fixture(scope="module", params=["auto", "explicit"])
def mesh(request):
    """A 2 x 4 ('data', 'model') mesh; 'explicit' carries shardings in types."""
    kind = AxisType.Auto if request.param == "auto" else AxisType.Explicit
    return Mesh(_devices(), ("data", "model"), axis_types=(kind, kind))


@pytest.fixture(scope="module")
def auto_mesh():
    return Mesh(_devices(), ("data", "model"))


def local_custom_calls(fn, *args):
    """Compiles fn(*args); asserts it has no collective; returns how many
    elements each of its SiluGrad custom calls computes (one shard's; the
    lowering merges dimensions, so the count, not the shape, is the user's)."""
    hlo = jax.jit(fn).lower(*args).compile().as_text()
    found = [c for c in COLLECTIVES if c in hlo]
    assert not found, f"collectives in the compiled program: {found}"
    lines = [line for line in hlo.splitlines() if HLO_CALL in line]
    assert lines, "no SiluGrad custom call in the compiled program"
    # e.g. "%ffi_call.3 = f32[8,8]{1,0} custom-call(%param.2, %param.1), ..."
    return [math.prod(int(d) for d in re.search(r"= \(?\w+\[([\d,]*)\]", line).group(1).split(",") if d)
            for line in lines]


def _put(mesh, a, spec):
    return jax.device_put(a, NamedSharding(mesh, spec))


# id: (grad_output shape, spec, x shape, spec, result spec)
CASES = {
    "same-shape": ((16, 32), P("data", "model"), (16, 32), P("data", "model"), P("data", "model")),
    "x-broadcast": ((16, 32), P("data", "model"), (32,), P("model"), P("data", "model")),
    "g-broadcast": ((32,), P("model"), (16, 32), P("data", "model"), P("data", "model")),
    "both-broadcast": ((16, 1), P("data", None), (1, 32), P(None, "model"), P("data", "model")),
    "one-mesh-axis-replicated": ((16, 32), P("data", None), (16, 32), P("data", None), P("data", None)),
    "two-mesh-axes-on-one-dim": ((4, 16, 6), P(None, ("data", "model")), (16, 6), P(("data", "model")),
                                 P(None, ("data", "model"), None)),
    "scalar-x": ((16, 32), P("data", "model"), (), P(), P("data", "model")),
}


def _case(mesh, case, dtype=np.float32):
    g_shape, g_spec, x_shape, x_spec, out_spec = CASES[case]
    rng = np.random.default_rng(0)
    g = rng.standard_normal(g_shape).astype(dtype)
    x = (rng.standard_normal(x_shape) * 4).astype(dtype)
    return g, x, _put(mesh, g, g_spec), _put(mesh, x, x_spec), out_spec


@pytest.mark.parametrize("case", CASES, ids=str)
def test_silu_grad_runs_per_shard(mesh, case):
    g, x, g_sharded, x_sharded, out_spec = _case(mesh, case)
    out_shape = np.broadcast_shapes(g.shape, x.shape)
    shard_shape = NamedSharding(mesh, out_spec).shard_shape(out_shape)
    assert local_custom_calls(jas.silu_grad, g_sharded, x_sharded) == [math.prod(shard_shape)]
    out = jax.jit(jas.silu_grad)(g_sharded, x_sharded)
    assert out.sharding.is_equivalent_to(NamedSharding(mesh, out_spec), len(out_shape))
    reference.assert_silu_grad(out, g, x, np.float32)


def test_phase_one_sees_one_shard(mesh):
    # The handler plans (and sizes any workspace) from the buffers it gets:
    # one device's shard, with its single result, never the global shapes.
    _, _, g_sharded, x_sharded, _ = _case(mesh, "x-broadcast")  # x broadcast: phase 1 wants a workspace
    hlo = jax.jit(jas.silu_grad).lower(g_sharded, x_sharded).compile().as_text()
    (line,) = [line for line in hlo.splitlines() if HLO_CALL in line]
    assert re.search(r"= f32\[8,8\]\{1,0\} custom-call\(", line), line
    assert "operand_layout_constraints={f32[8,8]{1,0}, f32[8]{0}}" in line, line


@pytest.mark.parametrize("dtype", reference.DTYPES, ids=lambda d: d.name)
def test_silu_forward_and_backward_run_per_shard(mesh, dtype):
    spec = P("data", "model")
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((16, 32)) * 3).astype(dtype)
    ct = rng.standard_normal((16, 32)).astype(dtype)

    def forward_backward(x, ct):
        y, vjp = jax.vjp(jas.silu, x)
        return y, vjp(ct)[0]

    args = _put(mesh, x, spec), _put(mesh, ct, spec)
    assert local_custom_calls(forward_backward, *args) == [8 * 8]
    y, dx = jax.jit(forward_backward)(*args)
    assert dx.sharding.is_equivalent_to(NamedSharding(mesh, spec), 2)
    eps = float(jnp.finfo(dtype).eps)  # the forward pass is jax.nn.silu, fused differently here
    np.testing.assert_allclose(np.asarray(y, np.float32), np.asarray(jax.nn.silu(x), np.float32), rtol=eps, atol=eps)
    reference.assert_silu_grad(dx, ct, x, dtype)


def test_derivative_of_backward_pass_stays_local(mesh):
    spec = P("data", "model")
    x = np.linspace(-4, 4, 512, dtype=np.float32).reshape(16, 32)
    ct = np.ones_like(x)

    def backward_jvp(x, ct):  # the backward pass and its derivative along ct
        return jax.jvp(lambda v: jax.vjp(jas.silu, v)[1](ct)[0], (x,), (ct,))

    args = _put(mesh, x, spec), _put(mesh, ct, spec)
    assert local_custom_calls(backward_jvp, *args) == [8 * 8]
    dx, d2x = jax.jit(backward_jvp)(*args)
    reference.assert_silu_grad(dx, ct, x, np.float32)
    np.testing.assert_allclose(d2x, reference.silu_second_derivative(x), rtol=1e-5, atol=1e-6)


def test_vmap_of_sharded_silu_grad_stays_local(mesh):
    g, x, g_sharded, x_sharded, _ = _case(mesh, "x-broadcast")
    fn = jax.vmap(jas.silu_grad, in_axes=(0, None))
    assert local_custom_calls(fn, g_sharded, x_sharded) == [8 * 8]
    reference.assert_silu_grad(jax.jit(fn)(g_sharded, x_sharded), g, x, np.float32)


def test_gspmd_partitioner_also_keeps_shards(auto_mesh):
    _, _, g_sharded, x_sharded, _ = _case(auto_mesh, "x-broadcast")
    jax.config.update("jax_use_shardy_partitioner", False)
    try:
        assert local_custom_calls(lambda a, b: jas.silu_grad(a, b), g_sharded, x_sharded) == [8 * 8]
    finally:
        jax.config.update("jax_use_shardy_partitioner", True)


# --------------------------------------------------------------- shard_map --

def _shard_map(mesh, fn, in_specs, out_specs, **kwargs):
    return jax.jit(jax.shard_map(fn, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=True, **kwargs))


@pytest.mark.parametrize("case", ["same-shape", "x-broadcast", "both-broadcast"])
def test_inside_shard_map(auto_mesh, case):
    g, x, _, _, out_spec = _case(auto_mesh, case)
    fn = _shard_map(auto_mesh, jas.silu_grad, (CASES[case][1], CASES[case][3]), out_spec)
    reference.assert_silu_grad(fn(g, x), g, x, np.float32)


def test_grad_of_silu_inside_shard_map(auto_mesh):
    x = (np.random.default_rng(2).standard_normal((16, 32)) * 3).astype(np.float32)
    spec = P("data", "model")
    fn = _shard_map(auto_mesh, jax.grad(lambda v: jas.silu(v).sum()), (spec,), spec)
    reference.assert_silu_grad(fn(x), np.ones_like(x), x, np.float32)


def test_gradient_of_invariant_operand_is_summed_over_devices(auto_mesh):
    """grad_output replicated (invariant), x sharded: its cotangent must be the
    sum over devices, as for any jnp op inside shard_map."""
    x = np.linspace(-3, 3, 16 * 32, dtype=np.float32).reshape(16, 32)
    w = np.ones((8, 8), np.float32)
    specs = (P(), P("data", "model"))

    def grad_w(op):
        return _shard_map(auto_mesh, lambda w, v: jax.grad(lambda w: op(w, v).sum())(w), specs, P())(w, x)

    blocks = x.reshape(2, 8, 4, 8).transpose(0, 2, 1, 3).reshape(8, 8, 8)
    np.testing.assert_allclose(grad_w(jas.silu_grad), reference.silu_derivative(blocks).sum(0), rtol=1e-5)


def test_partially_manual_shard_map(auto_mesh):
    g, x, _, _, _ = _case(auto_mesh, "same-shape")
    fn = _shard_map(auto_mesh, jas.silu_grad, (P("data"), P("data")), P("data"), axis_names={"data"})
    reference.assert_silu_grad(fn(g, x), g, x, np.float32)


def test_primitive_refuses_operands_varying_over_different_axes(auto_mesh):
    fn = _shard_map(auto_mesh, jas.silu_grad_p.bind, (P(), P("data", "model")), P("data", "model"))
    with pytest.raises(ValueError, match=r"grad_output \(float32\[8, 8\]\) varies over mesh axes \[\]"):
        fn(np.ones((8, 8), np.float32), np.ones((16, 32), np.float32))
