"""Eight Python threads calling jitted and eager silu_grad at once each get
their own correct answer: the kernel keeps no mutable global state."""

import threading

import jax
import jax.numpy as jnp
import numpy as np

import jax_ascend_silu as jas

THREADS = 8
ROUNDS = 12


def test_threads_get_their_own_answers():
    rng = np.random.default_rng(0)
    shapes = [(3000,), (257, 129), (64, 1), (1, 1000), (40000,), (5, 7, 9), (123,), (2, 2048)]
    dtypes = [jnp.float32, jnp.bfloat16, jnp.float16, jnp.float32] * 2
    cases = []
    for i, (shape, dtype) in enumerate(zip(shapes, dtypes)):
        g = jnp.asarray(rng.standard_normal(shape), dtype)
        x = jnp.asarray(rng.standard_normal(shape[-1:]) * 3 if i % 3 == 2 else rng.standard_normal(shape) * 3, dtype)
        cases.append((g, x, np.asarray(jas.silu_grad(g, x))))  # single-threaded answer
    jitted = jax.jit(jas.silu_grad)
    barrier = threading.Barrier(THREADS)
    failures = []

    def worker(k):
        g, x, expected = cases[k]
        barrier.wait()
        for r in range(ROUNDS):
            fn = jitted if (r + k) % 2 else jas.silu_grad
            got = np.asarray(fn(g, x))
            if got.shape != expected.shape or not np.array_equal(got, expected, equal_nan=True):
                failures.append((k, r))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not failures, failures
