"""The registered FFI target called directly with inconsistent buffers
returns an XLA error carrying the aclnn status, never a crash."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jax_ascend_silu import _ffi


def _call(out_shape, out_dtype, *operands):
    return jax.ffi.ffi_call(_ffi.TARGET, jax.ShapeDtypeStruct(out_shape, out_dtype))(*operands)


@pytest.mark.parametrize(
    "out_shape, out_dtype, operands, pattern",
    [
        ((3, 4), jnp.float32, (jnp.ones(5), jnp.ones(5)), r"ACLNN_ERR_PARAM_INVALID \(161002\).*grad_input float32\[3,4\]"),
        ((5,), jnp.float32, (jnp.ones(5), jnp.ones(5, jnp.bfloat16)), r"161002.*self bfloat16\[5\]"),
        ((5,), jnp.int32, (jnp.ones(5, jnp.int32), jnp.ones(5, jnp.int32)), r"161002"),
        ((5,), jnp.float32, (jnp.ones(5, jnp.float32), jnp.ones(5, jnp.float32)) , None),
        ((1, 5), jnp.float32, (jnp.ones((6, 5)), jnp.ones(5)), r"161002"),
        ((2,) * 9, jnp.float32, (jnp.ones((2,) * 9), jnp.ones((2,) * 9)), r"161002"),
    ],
    ids=["shape", "mixed-dtypes", "int32", "consistent", "output-too-small", "rank9"],
)
def test_inconsistent_buffers_give_errors(out_shape, out_dtype, operands, pattern):
    if pattern is None:  # the control: a consistent call works
        out = _call(out_shape, out_dtype, *operands)
        np.testing.assert_allclose(out, np.full(out_shape, 0.9276705, np.float32), rtol=1e-6)
        return
    with pytest.raises(Exception, match=pattern) as info:
        jax.block_until_ready(_call(out_shape, out_dtype, *operands))
    assert "jax_ascend_silu" in str(info.value)
