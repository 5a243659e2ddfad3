"""Checks the Python tests share: the SiluGrad custom calls in a compiled
program (the target named once, by the package), trees of arrays compared
leaf by leaf, and the raw kernel's test module."""

import importlib

import jax
import numpy as np

from jax_ascend_silu._ffi import SWIGLU_TARGET, TARGET

#: A SiluGrad call as it appears in compiled HLO text.
HLO_CALL = f'custom_call_target="{TARGET}"'
#: A SwiGluGrad call, likewise.
HLO_SWIGLU_CALL = f'custom_call_target="{SWIGLU_TARGET}"'


def custom_calls(fn, *args, target=HLO_CALL) -> int:
    """SiluGrad custom calls (or ``target``'s) in the optimised program XLA runs for fn(*args)."""
    return jax.jit(fn).lower(*args).compile().as_text().count(target)


def swiglu_and_silu_calls(fn, *args) -> tuple[int, int]:
    """(SwiGluGrad calls, SiluGrad calls) in the optimised program XLA runs for fn(*args)."""
    text = jax.jit(fn).lower(*args).compile().as_text()
    return text.count(HLO_SWIGLU_CALL), text.count(HLO_CALL)


def assert_close_at_scale(actual, expected, rtol=2e-5, atol=2e-6, err_msg=""):
    """``actual`` within ``rtol`` of ``expected``'s scale (its largest finite magnitude), compared in float64.

    Gradients reach a leaf through matmuls and sums whose terms cancel, and two programs (the routed one
    and XLA's own, or one jax release and the next) may order and fuse those sums differently. An element
    that cancelled to a small value then carries the rounding of its large terms, so it is judged against
    the leaf's scale, not its own size. A wrong derivative moves elements by a fraction of that scale and
    still fails. NaN and infinities must sit at the same places."""
    a = np.asarray(actual, np.float64)
    b = np.asarray(expected, np.float64)
    finite = np.abs(b[np.isfinite(b)])
    scale = float(finite.max()) if finite.size else 0.0
    np.testing.assert_allclose(a, b, rtol=0, atol=atol + rtol * scale, err_msg=err_msg)


def assert_trees_close(actual, expected, rtol=2e-5, atol=2e-6):
    """The same tree of arrays: structure, then each leaf's dtype, shape and values within ``rtol`` of the
    leaf's scale (assert_close_at_scale; half types compare too)."""
    assert jax.tree.structure(actual) == jax.tree.structure(expected)
    leaves = jax.tree.leaves(actual)
    assert leaves
    for i, (a, b) in enumerate(zip(leaves, jax.tree.leaves(expected))):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert_close_at_scale(a, b, rtol, atol, err_msg=f"leaf {i}")


def kernel_module():
    """The test module ``_silu_grad_cpu_testing`` (tests/bindings): the raw
    two-phase kernel API on NumPy buffers. The wheel does not ship it; an
    editable install builds it."""
    name = "jax_ascend_silu._silu_grad_cpu_testing"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name != name:
            raise
        raise ImportError(
            f"{name} is not built: the tests of the raw kernel need the editable install of README.md's test "
            "command (pip install -e '.[test]'), or a build with -Ccmake.define.JAX_ASCEND_SILU_TEST_MODULE=ON",
            name=name,
        ) from None
