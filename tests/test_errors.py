"""Bad input fails at trace time with a clear TypeError/ValueError."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_ascend_silu as jas


@pytest.mark.parametrize("transform", [lambda f: f, jax.jit], ids=["eager", "jit"])
@pytest.mark.parametrize(
    "g, x, error, pattern",
    [
        (jnp.ones(3, jnp.int32), jnp.ones(3, jnp.int32), TypeError, r"grad_output has dtype int32 \(shape \(3,\)\)"),
        (jnp.ones(3), jnp.ones(3, jnp.int8), TypeError, r"x has dtype int8"),
        (jnp.ones(3, jnp.complex64), jnp.ones(3), TypeError, r"grad_output has dtype complex64"),
        (jnp.ones(3), jnp.ones(3, jnp.bfloat16), TypeError, r"grad_output \(float32\[3\]\) and x \(bfloat16\[3\]\) must have the same dtype"),
        (jnp.ones((3, 4)), jnp.ones(5), ValueError, r"shapes of grad_output \(float32\[3, 4\]\) and x \(float32\[5\]\) do not broadcast"),
        (1j, jnp.ones(3), TypeError, r"^silu_grad: grad_output is a Python complex"),
        (jnp.ones(3), 2j, TypeError, r"^silu_grad: x is a Python complex"),
        (2, jnp.ones(3), TypeError, r"^silu_grad: grad_output is a Python int"),
        (jnp.ones(3), True, TypeError, r"^silu_grad: x has dtype bool"),
    ],
    ids=["int", "int8-x", "complex", "mixed-float", "shapes", "complex-scalar-g", "complex-scalar-x",
         "int-scalar-g", "bool-scalar-x"],
)
def test_bad_operands(transform, g, x, error, pattern):
    with pytest.raises(error, match=pattern):
        transform(jas.silu_grad)(g, x)


@pytest.mark.parametrize("value", ["yes", 1, None, "True"])
def test_overwrite_grad_output_must_be_a_bool(value):
    with pytest.raises(TypeError, match=r"^silu_grad: overwrite_grad_output must be True or False"):
        jas.silu_grad(jnp.ones(3), jnp.ones(3), overwrite_grad_output=value)


def test_float64_is_refused_with_x64():
    # silu falls back to jax.nn.silu on float64 instead (tests/test_silu_modes.py).
    with jax.enable_x64(True):
        with pytest.raises(TypeError, match="grad_output has dtype float64"):
            jas.silu_grad(jnp.ones(3, jnp.float64), jnp.ones(3, jnp.float64))


@pytest.mark.parametrize("dtype", [np.int32, np.bool_, np.complex64])
def test_silu_refuses_non_floating_input_naming_silu(dtype):
    with pytest.raises(TypeError, match=rf"^silu: x has dtype {np.dtype(dtype).name} .*Cast x"):
        jas.silu(np.ones(3, dtype=dtype))
