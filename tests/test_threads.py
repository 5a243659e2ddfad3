"""The CPU backend's helper threads as a process sees them: one per other CPU,
named so that ``top -H`` shows them, started by the first call large enough
to share; none where JAX_ASCEND_SILU_THREADS=1 or the process may use one CPU.
(A child forked after they started is tested in tests/kernel/test_helpers.cc:
through JAX it cannot be, since XLA's own executions hang in such a child.)

Each case runs in a fresh Python process, so that the helpers start (or not)
under the conditions the case sets up."""

import os
import subprocess
import sys
import textwrap

import pytest

# call() makes a 2^19-element float32 call, which is shared however long
# since the last one, and checks its result against a float64 reference;
# helpers() lists the helper threads by name.
_CALL = textwrap.dedent(f"""
    import os, sys
    sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
    import numpy as np
    import jax, jax.numpy as jnp
    import jax_ascend_silu as jas
    import reference

    silu_grad = jax.jit(jas.silu_grad)

    def operands(seed):
        rng = np.random.default_rng(seed)
        g = rng.standard_normal(1 << 19).astype(np.float32)
        x = (rng.standard_normal(1 << 19) * 4).astype(np.float32)
        return g, x, jnp.asarray(g), jnp.asarray(x)

    def call(g, x, g_dev, x_dev):
        reference.assert_silu_grad(np.asarray(silu_grad(g_dev, x_dev)), g, x, np.float32)

    def helpers():
        names = [open(f"/proc/self/task/{{t}}/comm").read().strip() for t in os.listdir("/proc/self/task")]
        return sorted(n for n in names if n.startswith("jas-silu/"))
""")


def _run(body: str, env: dict | None = None, timeout: float = 120) -> str:
    proc = subprocess.run([sys.executable, "-c", _CALL + textwrap.dedent(body)], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=timeout, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.strip()


def _allowed_cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one CPU allowed: no helper to see (the next tests)")
def test_one_helper_per_allowed_cpu_named_after_it():
    out = _run("call(*operands(1)); print(' '.join(helpers()))")
    assert out.split() == sorted(f"jas-silu/{c}" for c in _allowed_cpus())


def test_none_before_a_call_large_enough_to_share():
    assert _run("print(len(helpers()))") == "0"


def test_none_with_one_thread_per_call():
    assert _run("call(*operands(2)); print(len(helpers()))", env={"JAX_ASCEND_SILU_THREADS": "1"}) == "0"


def test_none_in_a_process_allowed_one_cpu():
    cpu = _allowed_cpus()[0]
    out = _run(f"os.sched_setaffinity(0, {{{cpu}}}); call(*operands(3)); print(len(helpers()))", env={})
    assert out == "0"
