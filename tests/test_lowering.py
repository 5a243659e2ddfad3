"""Broadcasting stays inside the kernel: the lowered program hands the custom
call the operands as they are (no broadcast_in_dim, no broadcast in the
compiled HLO), and the compiled program's memory is the output alone, not
the expanded inputs (the kernel's workspace is taken by its handler at run
time, outside XLA's buffers)."""

import re

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import jax_ascend_silu as jas

BROADCASTS = [
    ((1, 4096), (2048, 1)),  # both
    ((2048, 4096), (4096,)),  # x (s'(x) once per element, in the workspace)
    ((4096,), (2048, 4096)),  # grad_output
    ((), (64, 64)),  # a scalar
    ((8, 1, 32), (1, 16, 1)),
]


def _ids(case):
    g, x = case
    return f"g{list(g)}-x{list(x)}".replace(" ", "")


def _custom_call_lines(text):
    return [line for line in text.splitlines() if "custom_call @jax_ascend_silu_silu_grad" in line]


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("case", BROADCASTS, ids=_ids)
def test_no_broadcast_feeds_the_custom_call(case, dtype):
    g_shape, x_shape = case
    g, x = jax.ShapeDtypeStruct(g_shape, dtype), jax.ShapeDtypeStruct(x_shape, dtype)
    lowered = jax.jit(jas.silu_grad).lower(g, x)
    text = lowered.as_text()
    assert "broadcast_in_dim" not in text
    (call,) = _custom_call_lines(text)
    # The operands arrive with their own shapes.
    operand_types = re.search(r":\s*\((.*?)\)\s*->", call).group(1)
    elem = "f32" if np.dtype(dtype) == np.float32 else "bf16"
    expected = ", ".join(f"tensor<{'x'.join(map(str, s)) + 'x' if s else ''}{elem}>" for s in (g_shape, x_shape))
    assert operand_types == expected
    compiled = lowered.compile().as_text()
    assert not re.search(r"=\s*\S+\s+broadcast\(", compiled)
    assert "jax_ascend_silu_silu_grad" in compiled


@pytest.mark.parametrize(
    "in_axes, g_shape, x_shape",
    [((0, None), (4, 8, 1), (1, 16)), ((None, 0), (8, 1), (4, 1, 16)), ((1, 0), (8, 4, 1), (4, 1, 16))],
    ids=["g-batched", "x-batched", "both-batched"],
)
def test_no_broadcast_under_vmap(in_axes, g_shape, x_shape):
    g, x = jax.ShapeDtypeStruct(g_shape, jnp.float32), jax.ShapeDtypeStruct(x_shape, jnp.float32)
    text = jax.jit(jax.vmap(jas.silu_grad, in_axes=in_axes)).lower(g, x).as_text()
    assert len(_custom_call_lines(text)) == 1
    assert "broadcast_in_dim" not in text


@pytest.mark.parametrize("how", ["grad", "linear_transpose", "vmap_grad"])
@pytest.mark.parametrize("case", [c for c in BROADCASTS if c[1] != ()], ids=_ids)
def test_differentiating_in_grad_output_keeps_x_as_it_is(case, how):
    """silu_grad's derivative in grad_output is silu_grad again (its tangent
    transposes to the custom call), with x as the user passed it."""
    g_shape, x_shape = case
    out_shape = np.broadcast_shapes(g_shape, x_shape)
    g, x = jnp.ones(g_shape, jnp.float32), jnp.linspace(-3.0, 3.0, int(np.prod(x_shape)), dtype=jnp.float32)
    x = x.reshape(x_shape)
    w = jnp.ones(out_shape, jnp.float32)
    if how == "grad":
        fn = jax.grad(lambda a, v: (jas.silu_grad(a, v) * w).sum())
    elif how == "linear_transpose":
        def fn(a, v):
            return jax.linear_transpose(lambda t: jas.silu_grad(t, v), a)(w)[0]
    else:
        def fn(a, v):
            return jax.vmap(jax.grad(lambda b, u: (jas.silu_grad(b, u) * w).sum()), in_axes=(0, None))(
                jnp.stack([a, a]), v)
    text = jax.jit(fn).lower(g, x).as_text()
    calls = _custom_call_lines(text)
    assert len(calls) == 1, text
    x_type = f"tensor<{'x'.join(map(str, x_shape))}xf32>"
    assert f", {x_type})" in calls[0], calls[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("case", BROADCASTS[:3], ids=_ids)
def test_peak_memory_is_the_output_alone(case, dtype):
    # XLA holds the output and small bookkeeping; an expanded input would add
    # out_bytes (>= 8 MiB here). The kernel's own workspace (s'(x) of a
    # broadcast x) is host memory its handler takes for the call, not XLA's.
    g_shape, x_shape = case
    out_shape = np.broadcast_shapes(g_shape, x_shape)
    out_bytes = int(np.prod(out_shape)) * np.dtype(dtype).itemsize
    g, x = jax.ShapeDtypeStruct(g_shape, dtype), jax.ShapeDtypeStruct(x_shape, dtype)
    stats = jax.jit(jas.silu_grad).lower(g, x).compile().memory_analysis()
    assert stats is not None
    assert stats.output_size_in_bytes == out_bytes
    assert stats.temp_size_in_bytes <= 1024, stats.temp_size_in_bytes
