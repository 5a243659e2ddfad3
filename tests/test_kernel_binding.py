"""The raw kernel through the test module `_silu_grad_cpu_testing`: strided views with storage
offsets on NumPy buffers, status codes, and bitwise determinism over ISAs,
chunk sizes and threads (the C++ tests under ctest go deeper)."""

import ml_dtypes
import numpy as np
import pytest

import reference
from checks import kernel_module
from jax_ascend_silu import _silu_grad_cpu

kernel = kernel_module()
DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16]
SENTINEL = {np.dtype(np.float32): 0x7FC0BEEF, np.dtype(np.float16): 0x7E5A, np.dtype(ml_dtypes.bfloat16): 0x7E5A}


def _bits_dtype(dtype):
    return np.uint32 if np.dtype(dtype).itemsize == 4 else np.uint16


def _view(storage, shape, strides=None, offset=0):
    """A kernel View of a 1-D buffer of any of the three dtypes."""
    if storage.dtype == ml_dtypes.bfloat16:
        return kernel.View(storage.view(np.uint16), shape, strides, offset, dtype="bfloat16")
    return kernel.View(storage, shape, strides, offset)


def _numpy_view(storage, shape, strides, offset):
    item = storage.itemsize
    return np.lib.stride_tricks.as_strided(storage[offset:], shape, [s * item for s in strides], writeable=False)


def _storage_for(shape, strides, offset, dtype, rng=None, slack=5):
    extent = offset + sum((d - 1) * s for d, s in zip(shape, strides)) + 1 if all(shape) else offset
    if rng is None:
        return np.full(extent + slack, SENTINEL[np.dtype(dtype)], _bits_dtype(dtype)).view(dtype)
    return (rng.standard_normal(extent + slack) * 3).astype(dtype)


# (grad_output, x, grad_input): (shape, strides, offset) each.
STRIDED = [
    (((3, 4), (8, 2), 1), ((3, 4), (1, 3), 2), ((3, 4), (1, 5), 3)),  # transposed, gaps, offsets
    (((2, 3, 5), (0, 5, 1), 0), ((5,), (3,), 4), ((2, 3, 5), (40, 12, 2), 7)),  # stride-0 input, x broadcast
    (((4, 1), (9, 100), 2), ((1, 6), (0, 2), 1), ((4, 6), (1, 4), 0)),  # both broadcast, size-1 dims
    (((), (), 3), ((7,), (2,), 0), ((7,), (1,), 1)),  # a scalar grad_output
]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("case", STRIDED, ids=lambda c: "out" + str(list(c[2][0])).replace(" ", ""))
def test_strided_views_match_the_reference(case, dtype):
    rng = np.random.default_rng(0)
    (gs, gst, goff), (xs, xst, xoff), (os_, ost, ooff) = case
    g = _storage_for(gs, gst, goff, dtype, rng)
    x = _storage_for(xs, xst, xoff, dtype, rng)
    out = _storage_for(os_, ost, ooff, dtype)
    status = kernel.run(_view(g, gs, gst, goff), _view(x, xs, xst, xoff), _view(out, os_, ost, ooff))
    assert status == kernel.SUCCESS, kernel.status_name(status)
    gv, xv = _numpy_view(g, gs, gst, goff), _numpy_view(x, xs, xst, xoff)
    result = _numpy_view(out, os_, ost, ooff)
    err = reference.ulp_error(result, reference.silu_grad(gv, xv), dtype)
    assert err.max() <= reference.MAX_ULP[np.dtype(dtype)]
    # Nothing outside the output view was written.
    touched = np.zeros(out.size, bool)
    touched[np.ravel(_numpy_view(np.arange(out.size), os_, ost, ooff))] = True
    assert np.all(out.view(_bits_dtype(dtype))[~touched] == SENTINEL[np.dtype(dtype)])


def test_default_strides_and_whole_storage():
    g = np.linspace(-1, 1, 12, dtype=np.float32)
    x = np.linspace(-8, 8, 12, dtype=np.float32)
    out = np.zeros(12, np.float32)
    assert kernel.run(kernel.View(g, (3, 4)), kernel.View(x, (3, 4)), kernel.View(out, (3, 4))) == 0
    err = reference.ulp_error(out, reference.silu_grad(g, x), np.float32)
    assert err.max() <= 4
    view = kernel.View(x, (3, 4), offset=0)
    assert (view.shape, view.strides, view.offset, view.dtype, view.storage_numel) == ([3, 4], None, 0, "float32", 12)


def _status(g_shape=(4,), x_shape=(4,), out_shape=(4,), **kwargs):
    dtype = kwargs.pop("dtype", np.float32)
    buf = lambda shape: np.ones(max(int(np.prod(shape)), 1), dtype)  # noqa: E731
    views = kwargs.pop("views", None) or [kernel.View(buf(s), s) for s in (g_shape, x_shape, out_shape)]
    return kernel.run(*views, **kwargs)


def test_status_codes():
    ones = lambda n, t=np.float32: np.ones(n, t)  # noqa: E731
    assert _status() == kernel.SUCCESS
    # 161001: a null tensor, or no data at phase 2.
    assert kernel.run(None, kernel.View(ones(4), (4,)), kernel.View(ones(4), (4,))) == kernel.ERR_PARAM_NULLPTR
    assert kernel.plan(kernel.View(ones(4), (4,)), None, kernel.View(ones(4), (4,))) == (kernel.ERR_PARAM_NULLPTR, 0)
    no_data = kernel.View(None, (4,), dtype="float32", storage_numel=4)
    assert kernel.plan(kernel.View(ones(4), (4,)), no_data, kernel.View(ones(4), (4,)))[0] == kernel.SUCCESS
    assert kernel.run(kernel.View(ones(4), (4,)), no_data, kernel.View(ones(4), (4,))) == kernel.ERR_PARAM_NULLPTR
    # 161002: dtype, shapes, rank, bounds, overlap, workspace.
    assert kernel.run(kernel.View(ones(4, np.float64), (4,)), kernel.View(ones(4, np.float64), (4,)),
                      kernel.View(ones(4, np.float64), (4,))) == kernel.ERR_PARAM_INVALID
    assert kernel.run(kernel.View(ones(4), (4,)), kernel.View(ones(4, np.float16), (4,)),
                      kernel.View(ones(4), (4,))) == kernel.ERR_PARAM_INVALID
    assert _status((3, 4), (5,), (3, 5)) == kernel.ERR_PARAM_INVALID
    assert _status((3, 1), (1, 5), (3, 4)) == kernel.ERR_PARAM_INVALID
    assert _status((1,) * 9, (1,) * 9, (1,) * 9) == kernel.ERR_PARAM_INVALID
    assert _status((1,) * 8, (1,) * 8, (1,) * 8) == kernel.SUCCESS
    assert kernel.run(kernel.View(ones(4), (4,)), kernel.View(ones(4), (4,), offset=1),
                      kernel.View(ones(4), (4,))) == kernel.ERR_PARAM_INVALID
    assert kernel.run(kernel.View(ones(4), (4,)), kernel.View(ones(4), (4,), (-1,)),
                      kernel.View(ones(4), (4,))) == kernel.ERR_PARAM_INVALID
    assert kernel.run(kernel.View(ones(4), (2, 2)), kernel.View(ones(4), (2, 2)),
                      kernel.View(ones(4), (2, 2), (1, 1))) == kernel.ERR_PARAM_INVALID
    assert kernel.plan(kernel.View(ones(8), (2, 4)), kernel.View(ones(4), (4,)), kernel.View(ones(8), (2, 4))) == (0, 32)
    assert _status((2, 4), (4,), (2, 4), workspace_bytes=31) == kernel.ERR_PARAM_INVALID
    assert _status((2, 4), (4,), (2, 4), chunk_elements=-1) == kernel.ERR_PARAM_INVALID
    # Empty tensors: nothing to do, no workspace.
    assert kernel.plan(kernel.View(ones(1), (0, 4)), kernel.View(ones(4), (4,)), kernel.View(ones(1), (0, 4))) == (0, 0)
    assert [kernel.status_name(s) for s in (0, 161001, 161002, 561101, 561103)] == [
        "ACLNN_SUCCESS", "ACLNN_ERR_PARAM_NULLPTR", "ACLNN_ERR_PARAM_INVALID",
        "ACLNN_ERR_INNER_CREATE_EXECUTOR", "ACLNN_ERR_INNER_NULLPTR"]


def test_misuse_of_the_binding_raises():
    x = np.ones(4, np.float32)
    with pytest.raises(ValueError, match="strides has 1 entries for a shape of rank 2"):
        kernel.View(x, (2, 2), (1,))
    with pytest.raises(ValueError, match="storage_numel exceeds"):
        kernel.View(x, (4,), storage_numel=5)
    with pytest.raises(TypeError, match="dtype='bfloat16'"):
        kernel.View(np.ones(4, np.int32), (4,))
    with pytest.raises(TypeError, match="storage items are 4 bytes; bfloat16 needs 2"):
        kernel.View(x, (4,), dtype="bfloat16")
    with pytest.raises(ValueError, match="unknown isa 'sse'"):
        _status(isa="sse")
    with pytest.raises(ValueError, match="threads must be at least 1"):
        _status(threads=0)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("x_shape", [(97, 211), (211,)], ids=["x-once", "x-reused"])
def test_bitwise_identical_for_any_isa_chunk_and_thread_count(dtype, x_shape):
    rng = np.random.default_rng(1)
    g = (rng.standard_normal(97 * 211)).astype(dtype)
    x = (rng.standard_normal(int(np.prod(x_shape))) * 5).astype(dtype)
    results = {}
    for isa in _silu_grad_cpu.supported_isas():
        for chunk in (1, 100, 0):
            for threads in (1, 2, 5):
                out = np.zeros(97 * 211, dtype)
                status = kernel.run(_view(g, (97, 211)), _view(x, x_shape), _view(out, (97, 211)),
                                    isa=isa, chunk_elements=chunk, threads=threads)
                assert status == kernel.SUCCESS
                results[(isa, chunk, threads)] = out.view(_bits_dtype(dtype))
    first = next(iter(results.values()))
    for key, bits in results.items():
        np.testing.assert_array_equal(bits, first, err_msg=str(key))
