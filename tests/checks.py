"""Checks the Python tests share: the SiluGrad custom calls in a compiled
program (the target named once, by the package), and trees of arrays
compared leaf by leaf."""

import jax
import numpy as np

from jax_ascend_silu._ffi import TARGET

#: A SiluGrad call as it appears in compiled HLO text.
HLO_CALL = f'custom_call_target="{TARGET}"'


def custom_calls(fn, *args) -> int:
    """SiluGrad custom calls in the optimised program XLA runs for fn(*args)."""
    return jax.jit(fn).lower(*args).compile().as_text().count(HLO_CALL)


def assert_trees_close(actual, expected, rtol=2e-5, atol=2e-6):
    """The same tree of arrays: structure, then each leaf's dtype, shape and
    values within tolerance (compared in float32, so half types compare too)."""
    assert jax.tree.structure(actual) == jax.tree.structure(expected)
    leaves = jax.tree.leaves(actual)
    assert leaves
    for a, b in zip(leaves, jax.tree.leaves(expected)):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(np.asarray(a, np.float32), np.asarray(b, np.float32), rtol=rtol, atol=atol)
