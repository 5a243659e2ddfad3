"""Property-based tests: random ranks 0-8, broadcast pairs with size-0 and
size-1 dimensions, every dtype, hostile values; eager and jitted; compared
with the float64 reference."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import jax_ascend_silu as jas
import reference

DTYPES = [np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)]

SPECIALS = [np.inf, -np.inf, np.nan, -0.0, 0.0, 3.4e38, -3.4e38, 1e-40, -1e-40, 6e-8, -1.2784645, 2e7, -88.0, 100.0]


@st.composite
def broadcast_pair(draw):
    """Shapes (grad_output, x) whose broadcast has rank 0..8 and at most 512 elements."""
    rank = draw(st.integers(0, 8))
    out = [draw(st.sampled_from([0, 1, 1, 2, 3, 5])) if rank <= 4 else draw(st.sampled_from([1, 1, 2, 3])) for _ in range(rank)]
    if np.prod(out, dtype=np.int64) > 512:
        out = [min(d, 2) for d in out]

    def operand():
        keep = draw(st.integers(0, rank))  # leading dims dropped: rank may be lower
        dims = out[rank - keep:]
        return tuple(1 if draw(st.booleans()) and d != 0 else d for d in dims)

    g, x = operand(), operand()
    # Where the output has a dim of 0 or >1, one operand must carry it.
    shape = np.broadcast_shapes(g, x)
    assert len(shape) <= rank
    return g, x


@st.composite
def values(draw, shape, dtype):
    n = int(np.prod(shape, dtype=np.int64))
    finfo = ml_dtypes.finfo(dtype)
    hi = min(float(finfo.max), 1e38)
    elems = st.one_of(
        st.sampled_from(SPECIALS),
        st.floats(-100, 100),
        st.floats(-hi, hi),
    )
    data = draw(st.lists(elems, min_size=n, max_size=n))
    with np.errstate(over="ignore"):  # values beyond float16's range become inf, as intended
        return np.array(data, np.float64).astype(dtype).reshape(shape)


@st.composite
def case(draw):
    g_shape, x_shape = draw(broadcast_pair())
    dtype = draw(st.sampled_from(DTYPES))
    return draw(values(g_shape, dtype)), draw(values(x_shape, dtype)), dtype


def _assert_accurate(result, g, x, dtype):
    assert result.shape == np.broadcast_shapes(g.shape, x.shape)
    assert result.dtype == dtype
    with np.errstate(all="ignore"):
        exact = reference.silu_grad(g, x)
    err = reference.ulp_error(np.asarray(result), exact, dtype)
    assert err.size == 0 or err.max() <= reference.MAX_ULP[dtype], (g, x, np.asarray(result), exact)


_SETTINGS = dict(max_examples=int(__import__("os").environ.get("JAS_HYPOTHESIS_EXAMPLES", 250)), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@settings(**_SETTINGS)
@given(case())
def test_eager_matches_reference(c):
    g, x, dtype = c
    _assert_accurate(jas.silu_grad(jnp.asarray(g), jnp.asarray(x)), g, x, dtype)


_jitted = jax.jit(jas.silu_grad)


@settings(**_SETTINGS)
@given(case())
def test_jit_matches_reference(c):
    g, x, dtype = c
    _assert_accurate(_jitted(jnp.asarray(g), jnp.asarray(x)), g, x, dtype)
