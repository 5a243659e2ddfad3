"""More than 2^31 elements: the raw kernel (through the Python binding) and the
jitted XLA call index in 64 bits. The inputs are small operands broadcast by
stride-0 views, grad_output varying along the rows and x along the columns;
only the 16-bit output is large (~4.3 GB). Rows at the start, the middle and
the end (the last lies wholly past element 2^31), the two rows around 2^31
and a random sample of elements are checked against the float64 reference.

Marked `huge` (tens of seconds, mostly the first touch of the output's pages):
`python -m pytest` and CI run them; `python -m pytest -m "not huge"` leaves them
out. With less than NEEDED_GIB of memory available they skip, saying so, so that
a first run on a laptop passes; in CI (`CI` set, as CI services set it, or
JAX_ASCEND_SILU_REQUIRE_HUGE=1, as .ci/python and .ci/wheel set it) they fail
instead, since a skip there would hide them."""

import os

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import jax_ascend_silu as jas
import reference
from checks import kernel_module

ROWS, COLS = 2**19 + 1, 4096  # 2^31 + 4096 elements
BOUNDARY_ROW = 2**31 // COLS  # the first row past 2^31 elements
CHECKED_ROWS = np.array([0, 1, ROWS // 2, BOUNDARY_ROW - 1, BOUNDARY_ROW, ROWS - 1])
SAMPLE = 1 << 16
NEEDED_GIB = 5.0

pytestmark = pytest.mark.huge


REQUIRE_VARIABLE = "JAX_ASCEND_SILU_REQUIRE_HUGE"


def _required() -> bool:
    """Whether lack of memory fails these tests rather than skips them: in CI."""
    return any(os.environ.get(name, "").lower() not in ("", "0", "false")
               for name in ("CI", REQUIRE_VARIABLE))


@pytest.fixture(autouse=True)
def _enough_memory():
    """Skip (fail in CI) early and clearly, rather than be killed, where memory is short."""
    try:
        with open("/proc/meminfo") as f:
            info = dict(line.split(":", 1) for line in f)
    except OSError:
        return
    available = int(info["MemAvailable"].split()[0]) / 2**20
    if available >= NEEDED_GIB:
        return
    why = f"needs {NEEDED_GIB} GiB of free memory, {available:.1f} GiB available"
    if _required():
        pytest.fail(f"{why}; in CI (CI or {REQUIRE_VARIABLE} set) these tests must run")
    pytest.skip(f"{why}; these tests run in CI (deselect with -m 'not huge')")


def _inputs(dtype):
    """grad_output (ROWS, 1): distinct from row to row, never 0; x (COLS,):
    spread over [-9, 9] with an irregular wobble."""
    i = np.arange(ROWS)
    g = ((1 + (i % 251) / 64) * np.where(i % 2, -1.0, 1.0)).astype(dtype).reshape(ROWS, 1)
    c = np.arange(COLS)
    x = (np.linspace(-9, 9, COLS) + 0.3 * np.sin(c * 0.7)).astype(dtype)
    return g, x


def _sample(rng):
    return rng.integers(0, ROWS, SAMPLE), rng.integers(0, COLS, SAMPLE)


def _check(rows, sampled, g, x, dtype):
    """rows: the output's CHECKED_ROWS; sampled: its elements at _sample()'s indices."""
    reference.assert_silu_grad(np.asarray(rows), g[CHECKED_ROWS], x, dtype)
    r, c = _sample(np.random.default_rng(0))
    reference.assert_silu_grad(np.asarray(sampled), g[r, 0], x[c], dtype)
    # Start, middle and end really differ (so an index that wrapped would show).
    assert len({np.asarray(rows)[k].tobytes() for k in (0, 2, 5)}) == 3


def test_kernel_binding_indexes_past_two_to_the_31():
    kernel = kernel_module()
    dtype = ml_dtypes.bfloat16
    g, x = _inputs(dtype)
    out = np.empty(ROWS * COLS, dtype)

    def view(a, shape):
        return kernel.View(a.reshape(-1).view(np.uint16), shape, dtype="bfloat16")

    status = kernel.run(view(g, (ROWS, 1)), view(x, (COLS,)), view(out, (ROWS, COLS)), threads=2)
    assert status == kernel.SUCCESS, kernel.status_name(status)
    out = out.reshape(ROWS, COLS)
    _check(out[CHECKED_ROWS], out[_sample(np.random.default_rng(0))], g, x, dtype)


def test_jitted_silu_grad_indexes_past_two_to_the_31():
    dtype = np.float16
    g, x = _inputs(dtype)
    out = jax.jit(jas.silu_grad)(jnp.asarray(g), jnp.asarray(x))
    assert out.shape == (ROWS, COLS) and out.dtype == dtype
    r, c = _sample(np.random.default_rng(0))
    _check(out[jnp.asarray(CHECKED_ROWS)], out[jnp.asarray(r), jnp.asarray(c)], g, x, dtype)
