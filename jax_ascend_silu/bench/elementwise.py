"""SiluGrad on one large array: this package against XLA's autodiff of
``jax.nn.silu``, PyTorch's ``aten.silu_backward`` and a bandwidth bound;
after an idle moment and after a matmul in one program, as programs call it,
as well as back to back."""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

from ..op import silu_grad, silu_grad_overwriting, silu_grad_p
from .timing import Contender, Stats, measure

#: Columns of the sweep, in table order: (name, heading). The gapped calls
#: come first: a training or evaluation loop leaves an idle moment before each
#: call, and a back-to-back loop finds thread pools awake that it would not.
CONTENDERS = (
    ("ours_gap", "ours, 2 ms idle before"),
    ("xla_gap", "XLA autodiff, 2 ms idle before"),
    ("ours_program", "matmul then ours, one program"),
    ("xla_program", "matmul then XLA autodiff, one program"),
    ("ours", "ours, fresh result"),
    ("ours_donated", "ours, donated"),
    ("ours_copied", "ours, direct call, g alive"),
    ("ours_subnormal", "ours, subnormal g"),
    ("xla", "XLA autodiff"),
    ("xla_donated", "XLA autodiff, donated"),
    ("xla_subnormal", "XLA autodiff, subnormal g"),
    ("torch", "PyTorch"),
    ("bound", "a+b, donated"),
)

#: grad_output times this is subnormal in float32 and bfloat16 (~1e-39 for
#: |g| ~ 1); float16's subnormals are normal float32 numbers inside the kernel.
SUBNORMAL_SCALE = {"float32": 2.0**-130, "bfloat16": 2.0**-130, "float16": 2.0**-20}

#: The idle moment before each gapped call, as the Python work of a training
#: step leaves one: longer than XLA's pool spins for work before it parks its
#: threads.
GAP_S = 0.002

#: The program contenders compute grad_output with a (n / K, K) by (K, K)
#: matmul, so the call follows work XLA ran on its intra-op pool. Float32 only,
#: and up to PROGRAM_MAX_N elements: beyond it the matmul alone takes most of a
#: sweep case's time budget.
PROGRAM_K = 32
PROGRAM_MAX_N = 2**22


def fresh_silu_grad(grad_output, x):
    """This package's call with a result of its own, not written over
    grad_output (the primitive's overwrite_grad_output=False)."""
    return silu_grad_p.bind(grad_output, x, overwrite_grad_output=False)


def _xla_silu_grad(grad_output, x):
    return jax.vjp(jax.nn.silu, x)[1](grad_output)[0]


def _torch_module():
    try:
        import torch
    except ImportError:
        return None
    return torch


def _to_torch(torch, a):
    """A CPU tensor sharing nothing with JAX (bfloat16 travels as raw bits)."""
    host = np.array(a)
    if host.dtype == jnp.bfloat16:
        return torch.from_numpy(host.view(np.uint16)).view(torch.bfloat16)
    return torch.from_numpy(host)


def inputs(n: int, dtype, seed: int = 0):
    """grad_output ~ N(0, 1) and pre-activations x ~ N(0, 2^2)."""
    kg, kx = jax.random.split(jax.random.PRNGKey(seed))
    g = jax.random.normal(kg, (n,), jnp.float32).astype(dtype)
    x = (2.0 * jax.random.normal(kx, (n,), jnp.float32)).astype(dtype)
    return jax.block_until_ready((g, x))


def subnormal(g):
    """grad_output scaled into the subnormal range of its dtype, in NumPy
    (XLA's CPU arithmetic may flush subnormal results to zero)."""
    host = np.asarray(g)
    scaled = host.astype(np.float64) * SUBNORMAL_SCALE[host.dtype.name]
    return jax.block_until_ready(jnp.asarray(scaled.astype(host.dtype)))


def after_matmul(op):
    """A program whose SiluGrad takes its grad_output from a matmul:
    ``op((a @ w).reshape(-1), x)``."""
    return jax.jit(lambda a, w, x: op((a @ w).reshape(-1), x))


def matmul_operands(n: int, dtype):
    """(a, w) of after_matmul's programs for n elements."""
    ka, kw = jax.random.split(jax.random.PRNGKey(2))
    a = jax.random.normal(ka, (n // PROGRAM_K, PROGRAM_K), jnp.float32).astype(dtype)
    w = (jax.random.normal(kw, (PROGRAM_K, PROGRAM_K), jnp.float32) * PROGRAM_K**-0.5).astype(dtype)
    return jax.block_until_ready((a, w))


def contenders(g, x) -> list[Contender]:
    """This package's and XLA's contenders for one (size, dtype); donated ones
    get a fresh copy of grad_output (made outside the timed region) on every
    call.

    This package and XLA after 2 ms idle (GAP_S) and, for float32 up to
    PROGRAM_MAX_N, after a matmul in one program (also after the idle
    moment). Back to back, this package four ways: writing a fresh result,
    in place over a donated grad_output, the direct call
    ``jax.jit(silu_grad)(g, x)`` with g still alive afterwards (whatever the
    call does about it: a copy of g to write over, or a result of its own),
    and a fresh result from a subnormal grad_output (with XLA on the same
    inputs)."""
    copy = jax.jit(jnp.copy)
    fresh = lambda: (g, x)  # noqa: E731
    donated = lambda: (copy(g), x)  # noqa: E731
    g_sub = subnormal(g)
    tiny = lambda: (g_sub, x)  # noqa: E731
    ready = jax.block_until_ready
    gapped = [
        Contender("ours_gap", jax.jit(fresh_silu_grad), fresh, ready, GAP_S),
        Contender("xla_gap", jax.jit(_xla_silu_grad), fresh, ready, GAP_S),
    ]
    if g.dtype == jnp.float32 and PROGRAM_K <= g.size <= PROGRAM_MAX_N:
        a, w = matmul_operands(g.size, g.dtype)
        program_args = lambda: (a, w, x)  # noqa: E731
        gapped += [
            Contender("ours_program", after_matmul(fresh_silu_grad), program_args, ready, GAP_S),
            Contender("xla_program", after_matmul(_xla_silu_grad), program_args, ready, GAP_S),
        ]
    return [
        *gapped,
        Contender("ours", jax.jit(fresh_silu_grad), fresh, ready),
        Contender("ours_donated", jax.jit(silu_grad_overwriting, donate_argnums=0), donated, ready),
        Contender("ours_copied", jax.jit(silu_grad), fresh, ready),
        Contender("ours_subnormal", jax.jit(fresh_silu_grad), tiny, ready),
        Contender("xla", jax.jit(_xla_silu_grad), fresh, ready),
        Contender("xla_donated", jax.jit(_xla_silu_grad, donate_argnums=0), donated, ready),
        Contender("xla_subnormal", jax.jit(_xla_silu_grad), tiny, ready),
        Contender("bound", jax.jit(lambda a, b: a + b, donate_argnums=0), donated, ready),
    ]


def torch_contender(g, x) -> Contender | None:
    """PyTorch's ``aten.silu_backward`` on copies of the inputs, or None
    without torch (or without CPU support for the dtype)."""
    torch = _torch_module()
    if torch is None:
        return None
    tg, tx = _to_torch(torch, g), _to_torch(torch, x)
    try:
        torch.ops.aten.silu_backward(tg[:16], tx[:16])
    except RuntimeError:  # a dtype this torch build lacks on CPU
        return None
    return Contender("torch", torch.ops.aten.silu_backward, lambda: (tg, tx))


#: PyTorch's OpenMP workers keep spinning for milliseconds after a call
#: (libgomp's default), so PyTorch is timed in a block of its own, after the
#: JAX contenders, followed by this pause, so that its spinning workers do
#: not take a core from whichever contender runs next.
TORCH_SETTLE_S = 0.05


def run_size(n: int, dtype, repeats: int, budget_s: float) -> dict[str, Stats]:
    g, x = inputs(n, dtype)
    stats = measure(contenders(g, x), repeats, budget_s)
    torch = torch_contender(g, x)
    if torch is not None:
        stats.update(measure([torch], repeats, budget_s / 4))
        time.sleep(TORCH_SETTLE_S)
    return stats


def bytes_moved(n: int, dtype) -> int:
    """Two operands read, one result written."""
    return 3 * n * np.dtype(dtype).itemsize
