"""Eight Python threads calling jitted and eager silu_grad, and the raw kernel
with helper threads of its own, at once each get their own correct answer:
the kernel keeps no mutable global state. Two of the cases are large enough
to be shared with the CPU backend's helper threads (one through the precomputed
s'(x) workspace), so pooled and unpooled calls interleave."""

import threading

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

import jax_ascend_silu as jas
import reference
from checks import kernel_module

THREADS = 8
ROUNDS = 12
kernel = kernel_module()


def _kernel_silu_grad(g, x):
    """silu_grad through the raw kernel binding, with two helper threads."""
    shape = np.broadcast_shapes(g.shape, x.shape)
    out = np.empty(shape, g.dtype)

    def view(a, shape):
        flat = np.ascontiguousarray(a).reshape(-1)
        if a.dtype == ml_dtypes.bfloat16:
            return kernel.View(flat.view(np.uint16), shape, dtype="bfloat16")
        return kernel.View(flat, shape)

    status = kernel.run(view(g, g.shape), view(x, x.shape), view(out, shape), threads=3, chunk_elements=4096)
    assert status == kernel.SUCCESS, kernel.status_name(status)
    return out


def test_threads_get_their_own_answers():
    rng = np.random.default_rng(0)
    # (shape, x broadcast along the last dim?); the two large ones span many chunks.
    shapes = [((3000,), False), ((257, 129), False), ((64, 1), True), ((1, 1000), False),
              ((512, 1024), False), ((300, 2000), True), ((123,), False), ((2, 2048), True)]
    dtypes = [jnp.float32, jnp.bfloat16, jnp.float16, jnp.float32] * 2
    cases = []
    for (shape, broadcast), dtype in zip(shapes, dtypes):
        g = np.asarray(rng.standard_normal(shape), dtype)
        x = np.asarray(rng.standard_normal(shape[-1:] if broadcast else shape) * 3, dtype)
        expected = np.asarray(jas.silu_grad(g, x))  # computed alone, before the threads start
        reference.assert_silu_grad(expected, g, x, dtype)
        cases.append((g, x, jnp.asarray(g), jnp.asarray(x), expected))
    jitted = jax.jit(jas.silu_grad)
    barrier = threading.Barrier(THREADS)
    failures = []

    def worker(k):
        g, x, g_dev, x_dev, expected = cases[k]
        barrier.wait()
        for r in range(ROUNDS):
            kind = (r + k) % 3
            if kind == 0:
                got = np.asarray(jitted(g_dev, x_dev))
            elif kind == 1:
                got = np.asarray(jas.silu_grad(g_dev, x_dev))
            else:
                got = _kernel_silu_grad(g, x)
            if got.shape != expected.shape or not np.array_equal(got, expected, equal_nan=True):
                failures.append((k, r, ("jit", "eager", "kernel")[kind]))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not failures, failures
