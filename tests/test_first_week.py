"""What a JAX user reaches in the first week: jax.disable_jit, ranks above the
kernel's 8, strict rank promotion, forward-mode accuracy, jax.export with
symbolic shapes, cloudpickle, environment knobs, and route's outputs."""

import os
import pathlib
import pickle
import platform
import subprocess
import sys
import textwrap
import warnings

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import jax_ascend_silu as jas
import reference
from checks import custom_calls
from jax_ascend_silu._ffi import TARGET

HERE = pathlib.Path(__file__).parent


def _loss(v):
    return jnp.sum(jas.silu(v))


def _bits_equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


def _run(code, env=None):
    """Runs code in a fresh Python (the tests folder importable) and returns the process."""
    full_env = {**os.environ, "PYTHONPATH": str(HERE), **(env or {})}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=full_env, cwd=HERE, timeout=300)


# ------------------------------------------------------------- disable_jit --

def _x(dtype=np.float32, n=64):
    return jnp.asarray(np.linspace(-8, 8, n), dtype)


PUBLIC_CALLS = {
    "silu": lambda x: jas.silu(x),
    "silu_grad": lambda x: jas.silu_grad(jnp.cos(x), x),
    "silu_grad_p.bind": lambda x: jas.silu_grad_p.bind(x, x),
    "grad": lambda x: jax.grad(_loss)(x),
    "jvp": lambda x: jax.jvp(jas.silu, (x,), (jnp.cos(x),))[1],
    "grad_of_grad": lambda x: jax.grad(lambda v: jnp.sum(jax.grad(_loss)(v)))(x),
    "vmap_grad": lambda x: jax.vmap(jax.grad(lambda v: jas.silu(v)))(x),
    "route": lambda x: jax.grad(jas.route(lambda v: jnp.sum(jax.nn.silu(v))))(x),
}


@pytest.mark.combinatorial(cases=8)
@pytest.mark.parametrize("dtype", reference.DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("name", list(PUBLIC_CALLS))
def test_disable_jit_gives_the_values_of_jit(name, dtype):
    fn, x = PUBLIC_CALLS[name], _x(dtype)
    expected = fn(x)
    with jax.disable_jit():
        actual = fn(x)
    _bits_equal(actual, expected)


def test_route_rewrites_under_disable_jit():
    loss = jas.route(lambda v: jnp.sum(jax.nn.silu(v)))
    with jax.disable_jit():
        jaxpr = jax.make_jaxpr(jax.grad(loss))(jnp.ones(4))
    assert TARGET in str(jaxpr)


# ------------------------------------------------------------------ ranks --

def _broadcast_pair(shape, seed):
    """grad_output of ``shape`` and an x broadcasting against it (some dims 1, fewer dims)."""
    rng = np.random.default_rng(seed)
    keep = rng.random(len(shape)) < 0.5
    x_shape = tuple(d if k else 1 for d, k in zip(shape, keep))[rng.integers(0, 3):]
    g = rng.normal(size=shape) * 2
    x = rng.uniform(-10, 10, size=x_shape)
    return g, x


@pytest.mark.combinatorial(cases=4)
@pytest.mark.parametrize("dtype", reference.DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("rank", [9, 10, 11, 12])
def test_silu_grad_at_ranks_above_eight(rank, dtype):
    shape = tuple(int(d) for d in np.random.default_rng(rank).integers(1, 4, size=rank))
    for g, x in (_broadcast_pair(shape, rank), _broadcast_pair(shape, rank + 100)):
        g, x = g.astype(dtype), x.astype(dtype)
        for operands in ((g, x), (x, g)):  # each operand broadcast in turn
            out = jas.silu_grad(*operands)
            reference.assert_silu_grad(out, *operands, dtype)
            _bits_equal(jax.jit(jas.silu_grad)(*operands), out)


@pytest.mark.parametrize("dtype", reference.DTYPES, ids=lambda d: d.name)
def test_alternating_broadcasts_beyond_eight_merged_dims(dtype):
    # Ten dims whose patterns alternate: merging alone leaves ten, so an operand is broadcast in full.
    g = np.random.default_rng(0).normal(size=(3, 1) * 5).astype(dtype)
    x = np.random.default_rng(1).uniform(-6, 6, size=(1, 2) * 5).astype(dtype)
    out = jas.silu_grad(g, x)
    reference.assert_silu_grad(out, g, x, dtype)
    assert custom_calls(jas.silu_grad, g, x) == 1


@pytest.mark.parametrize("dtype", reference.DTYPES, ids=lambda d: d.name)
def test_vmap_over_rank_eight_examples(dtype):
    x = jnp.asarray(np.random.default_rng(2).uniform(-6, 6, size=(3,) + (2,) * 8), dtype)
    g = jnp.cos(x)
    out = jax.vmap(jas.silu_grad)(g, x)
    reference.assert_silu_grad(out, np.asarray(g), np.asarray(x), dtype)
    grads = jax.vmap(jax.grad(_loss))(x)
    reference.assert_silu_grad(grads, np.ones(x.shape, dtype), np.asarray(x), dtype)
    assert custom_calls(jax.vmap(jax.grad(_loss)), x) == 1
    # An unbatched operand broadcasts over the batch.
    out = jax.vmap(jas.silu_grad, in_axes=(0, None))(g, x[0])
    reference.assert_silu_grad(out, np.asarray(g), np.asarray(x[0]), dtype)


def test_rank_twelve_silu_keeps_the_kernel():
    x = jnp.full((2, 1, 2) * 4, -0.75, jnp.float32)
    assert custom_calls(jax.grad(_loss), x) == 1
    reference.assert_silu_grad(jax.grad(_loss)(x), np.ones(x.shape, np.float32), np.asarray(x), np.float32)


# --------------------------------------------------------- rank promotion --

A, B = jnp.linspace(-2, 2, 5), jnp.ones((4, 5))
STRICT = {
    "grad": lambda: jax.grad(lambda a: jas.silu_grad(a, B).sum())(A),
    "grad-x": lambda: jax.grad(lambda a: jas.silu_grad(B, a).sum())(A),
    "jvp": lambda: jax.jvp(lambda a: jas.silu_grad(a, B), (A,), (A,)),
    "jvp-x": lambda: jax.jvp(lambda a: jas.silu_grad(B, a), (A,), (A,)),
    "vmap": lambda: jax.vmap(jas.silu_grad, in_axes=(0, None))(B, A),
    "vmap-grad": lambda: jax.vmap(jax.grad(lambda a: jas.silu_grad(a, B).sum()))(B),
    "jacfwd": lambda: jax.jacfwd(lambda a: jas.silu_grad(a, B))(A),
    "jacrev": lambda: jax.jacrev(lambda a: jas.silu_grad(B, a))(A),
    "hessian": lambda: jax.hessian(lambda a: jas.silu_grad(B, a).sum())(A),
    "hessian-silu": lambda: jax.hessian(lambda a: jas.silu(a).sum())(A),
    "linearize": lambda: jax.linearize(jas.silu, A)[1](A),
}


# Each case compiles a transformation of every public call: a sample of 3 by default.
@pytest.mark.combinatorial(cases=3, cover=())
@pytest.mark.parametrize("name", list(STRICT))
def test_no_rank_promotion_inside_the_package(name):
    with jax.numpy_rank_promotion("allow"):
        expected = STRICT[name]()
    with jax.numpy_rank_promotion("raise"):
        actual = STRICT[name]()
    jax.tree.map(_bits_equal, actual, expected)
    with jax.numpy_rank_promotion("warn"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        STRICT[name]()
    assert [str(w.message) for w in caught] == []


# ------------------------------------------------------ forward-mode accuracy --

def _inputs(dtype):
    """Every float16/bfloat16; for float32 random inputs over the range plus
    every float32 within 2^15 ulp of the root x0 = -1.2784645."""
    dtype = np.dtype(dtype)
    if dtype != np.float32:
        bits = np.arange(2**16, dtype=np.uint16).view(dtype)
        return bits[np.isfinite(bits.astype(np.float32))]
    rng = np.random.default_rng(3)
    root = (np.float32(-1.2784647).view(np.int32) + np.arange(-2**15, 2**15, dtype=np.int32)).view(np.float32)
    return np.concatenate([rng.uniform(-100, 100, 2**18).astype(np.float32),
                           rng.uniform(-4, 4, 2**18).astype(np.float32), root,
                           np.float32([np.inf, -np.inf, -1e38, 1e38, 0.0, -0.0])])


def _xla_ulp_error(out, exact, dtype):
    """ulp errors of a result computed by XLA's CPU code, which flushes float32
    subnormals to zero: a bfloat16 result below float32's smallest normal
    (bfloat16's too) is 0 there."""
    err = reference.ulp_error(out, exact, dtype)
    flushed = (np.asarray(out, np.float32) == 0) & (np.abs(exact) < 2.0**-126)
    return np.where(flushed & (np.dtype(dtype) == ml_dtypes.bfloat16), 0.0, err)


FORWARD = {
    "jvp": lambda x, t: jax.jvp(jas.silu, (x,), (t,))[1],
    "linearize": lambda x, t: jax.linearize(jas.silu, x)[1](t),
    "jvp-silu_grad": lambda x, t: jax.jvp(lambda g: jas.silu_grad(g, x), (jnp.ones_like(t),), (t,))[1],
    # jacfwd's tangents are ones: its result is s'(x) itself.
    "jacfwd": lambda x, t: jax.vmap(jax.jacfwd(jas.silu))(x),
}


@pytest.mark.combinatorial(cases=4)
@pytest.mark.parametrize("dtype", reference.DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("mode", list(FORWARD))
def test_forward_mode_tangents_are_as_accurate_as_reverse_mode(mode, dtype):
    x = _inputs(dtype)
    rng = np.random.default_rng(4)
    tangents = [np.ones_like(x)] + ([] if mode == "jacfwd" else [rng.normal(size=x.shape).astype(dtype)])
    for t in tangents:
        out = np.asarray(jax.jit(FORWARD[mode])(jnp.asarray(x), jnp.asarray(t)))
        exact = reference.silu_grad(t, x)
        err = _xla_ulp_error(out, exact, dtype)
        assert err.max() <= reference.MAX_ULP[np.dtype(dtype)], (err.max(), x[err.argmax()])


def test_forward_mode_at_the_root_and_the_limits():
    x = jnp.float32([-1.2784647, -1.2784646, -np.inf, -1e38, np.inf])
    t = jax.jvp(jas.silu, (x,), (jnp.ones_like(x),))[1]
    exact = reference.silu_derivative(np.asarray(x, np.float64))
    np.testing.assert_allclose(np.asarray(t)[:2], exact[:2], rtol=2e-6)
    # Both floats nearest the root lie below it, where s' < 0.
    assert list(np.signbit(np.asarray(t))) == [True, True, True, True, False]
    assert np.asarray(t)[4] == 1.0


@pytest.mark.parametrize("dtype", reference.DTYPES, ids=lambda d: d.name)
def test_minus_infinity_gives_minus_zero_like_a_huge_negative_x(dtype):
    g = jnp.asarray([1.0, 2.0, -1.0], dtype)
    for x in (-np.inf, -1e38 if dtype != np.float16 else -6e4):
        out = np.asarray(jas.silu_grad(g, jnp.full(3, x, dtype)), np.float32)
        assert list(np.signbit(out)) == [True, True, False] and not out.any(), (x, out)


# ------------------------------------------------------------------ export --

def test_export_with_symbolic_dims_reloads_in_a_fresh_process(tmp_path):
    from jax import export

    (n,) = export.symbolic_shape("n")
    checks = [export.DisabledSafetyCheck.custom_call(TARGET)]
    cases = {
        "silu_grad": (jax.jit(jas.silu_grad),
                      (jax.ShapeDtypeStruct((n, 3), jnp.float32), jax.ShapeDtypeStruct((1, 3), jnp.float32)),
                      lambda k: (np.random.default_rng(k).normal(size=(k, 3)).astype(np.float32),
                                 np.random.default_rng(k + 1).normal(size=(1, 3)).astype(np.float32))),
        "grad": (jax.jit(jax.grad(_loss)), (jax.ShapeDtypeStruct((n,), jnp.bfloat16),),
                 lambda k: (np.linspace(-5, 5, k).astype(ml_dtypes.bfloat16),)),
    }
    for name, (fn, specs, make) in cases.items():
        exported = export.export(fn, disabled_checks=checks)(*specs)
        assert TARGET in exported.mlir_module()
        (tmp_path / f"{name}.bin").write_bytes(exported.serialize())
        for k in (1, 7):
            args = make(k)
            np.save(tmp_path / f"{name}-{k}-expected.npy", np.asarray(fn(*args)).view(np.uint8))
            for i, a in enumerate(args):
                np.save(tmp_path / f"{name}-{k}-arg{i}.npy", a.view(np.uint8))
                np.save(tmp_path / f"{name}-{k}-arg{i}-dtype.npy", np.array(str(a.dtype)))
    proc = _run(f"""
        import pathlib, numpy as np, ml_dtypes, jax
        from jax import export
        import jax_ascend_silu  # registers the SiluGrad handler the artifact calls
        d = pathlib.Path({str(tmp_path)!r})
        for name, arity in (("silu_grad", 2), ("grad", 1)):
            exp = export.deserialize(bytearray((d / f"{{name}}.bin").read_bytes()))
            for k in (1, 7):
                args = []
                for i in range(arity):
                    dt = np.dtype(str(np.load(d / f"{{name}}-{{k}}-arg{{i}}-dtype.npy")))
                    args.append(np.load(d / f"{{name}}-{{k}}-arg{{i}}.npy").view(dt).reshape(-1, *([3] if name == "silu_grad" else [])))
                if name == "silu_grad":
                    args[1] = args[1].reshape(1, 3)
                else:
                    args[0] = args[0].reshape(-1)
                out = np.asarray(exp.call(*args)).view(np.uint8).reshape(-1)
                want = np.load(d / f"{{name}}-{{k}}-expected.npy").reshape(-1)
                assert (out == want).all(), (name, k)
        print("ok")
    """)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


# --------------------------------------------------------------- pickling --

def test_cloudpickle_round_trip_of_every_public_function(tmp_path):
    import cloudpickle  # in the test extra
    x = np.linspace(-4, 4, 9).astype(np.float32)
    g = np.cos(x).astype(np.float32)
    fns = {
        "silu": (jas.silu, (x,)),
        "silu_grad": (jas.silu_grad, (g, x)),
        "silu_grad_p.bind": (jas.silu_grad_p.bind, (g, x)),
        "grad": (jax.jit(jax.grad(_loss)), (x,)),
        "route": (jas.route(lambda v: jnp.sum(jax.nn.silu(v) ** 2)), (x,)),
        "grad-route": (jax.grad(jas.route(lambda v: jnp.sum(jax.nn.silu(v) ** 2))), (x,)),
    }
    payload = {name: (cloudpickle.dumps(fn), args, np.asarray(fn(*args))) for name, (fn, args) in fns.items()}
    (tmp_path / "payload.pkl").write_bytes(pickle.dumps(payload))
    proc = _run(f"""
        import pickle, numpy as np
        payload = pickle.loads(open({str(tmp_path / "payload.pkl")!r}, "rb").read())
        for name, (blob, args, expected) in payload.items():
            fn = pickle.loads(blob)
            out = np.asarray(fn(*args))
            same = out.reshape(-1).view(np.uint8) == expected.reshape(-1).view(np.uint8)
            assert out.dtype == expected.dtype and out.shape == expected.shape and same.all(), name
        print("ok", len(payload))
    """)
    assert proc.returncode == 0 and proc.stdout.strip() == f"ok {len(fns)}", proc.stderr


def test_primitives_pickle_by_reference():
    from jax_ascend_silu.op import silu_tangent_p

    assert pickle.loads(pickle.dumps(jas.silu_grad_p)) is jas.silu_grad_p
    assert pickle.loads(pickle.dumps(silu_tangent_p)) is silu_tangent_p


# ------------------------------------------------------ environment knobs --

# Each case starts two processes: by default one case per kind of refusal.
@pytest.mark.combinatorial(cases=3, cover=("accepted",))
@pytest.mark.parametrize(
    "name, value, accepted",
    [
        ("JAX_ASCEND_SILU_THREADS", "abc", "positive integer"),
        ("JAX_ASCEND_SILU_THREADS", "0", "positive integer"),
        ("JAX_ASCEND_SILU_THREADS", "-1", "positive integer"),
        ("JAX_ASCEND_SILU_THREADS", "4x", "positive integer"),
        ("JAX_ASCEND_SILU_ISA", "bogus", "scalar, avx2, avx512, neon"),
        ("JAX_ASCEND_SILU_ISA", "AVX2", "scalar, avx2, avx512, neon"),
        # A name the kernel knows that this x86-64 or AArch64 processor cannot run.
        ("JAX_ASCEND_SILU_ISA", "neon" if platform.machine() in ("x86_64", "AMD64") else "avx2",
         "this processor runs only"),
    ],
)
def test_invalid_environment_values_are_reported(name, value, accepted):
    proc = _run("""
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import jax_ascend_silu
        for w in caught:
            print("WARNING", w.message)
        import jax.numpy as jnp
        print(float(jax_ascend_silu.silu_grad(jnp.ones(4), jnp.ones(4))[0]))
    """, env={name: value})
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("WARNING")]
    assert len(lines) == 1 and f"{name}={value!r} is ignored" in lines[0] and accepted in lines[0], proc.stdout
    info = subprocess.run([sys.executable, "-m", "jax_ascend_silu", "info"], capture_output=True, text=True,
                          env={**os.environ, name: value}, cwd=HERE, timeout=300)
    assert info.returncode == 0, info.stderr
    assert f"capped at {value}" not in info.stdout and f"{value}, chosen by" not in info.stdout
    assert f"{name}={value!r} is ignored" in info.stdout


def test_valid_environment_values_raise_no_warning_and_show_in_info():
    proc = _run("""
        import warnings
        warnings.simplefilter("error")
        import jax_ascend_silu
        print(jax_ascend_silu._silu_grad_cpu.isa())
    """, env={"JAX_ASCEND_SILU_THREADS": "3", "JAX_ASCEND_SILU_ISA": "scalar"})
    assert proc.returncode == 0 and proc.stdout.strip() == "scalar", proc.stderr
    info = subprocess.run([sys.executable, "-m", "jax_ascend_silu", "info"], capture_output=True, text=True,
                          env={**os.environ, "JAX_ASCEND_SILU_THREADS": "3", "JAX_ASCEND_SILU_ISA": "scalar"},
                          cwd=HERE, timeout=300)
    assert "capped at 3 by JAX_ASCEND_SILU_THREADS" in info.stdout and "is ignored" not in info.stdout
    assert "kernel ISA scalar, chosen by JAX_ASCEND_SILU_ISA" in info.stdout


def test_the_environment_is_read_once_and_info_reports_what_was_read():
    # The kernel parses each variable once (kernel/cpu/environment.cc); a later
    # change of the environment changes neither what it applies nor what is reported.
    proc = _run("""
        import os
        import jax.numpy as jnp
        import jax_ascend_silu
        from jax_ascend_silu import __main__ as cli
        jax_ascend_silu.silu_grad(jnp.ones(4), jnp.ones(4)).block_until_ready()
        os.environ["JAX_ASCEND_SILU_THREADS"] = "5"
        os.environ["JAX_ASCEND_SILU_ISA"] = "bogus"
        print(jax_ascend_silu._silu_grad_cpu.environment())
        cli.main(["info"])
    """, env={"JAX_ASCEND_SILU_THREADS": "2", "JAX_ASCEND_SILU_ISA": "scalar"})
    assert proc.returncode == 0, proc.stderr
    assert ("{'JAX_ASCEND_SILU_THREADS': {'set': True, 'value': b'2', 'accepted': True, 'cap': 2}, "
            "'JAX_ASCEND_SILU_ISA': {'set': True, 'value': b'scalar', 'accepted': True, 'isa': 'scalar'}}") \
        in proc.stdout, proc.stdout
    assert "capped at 2 by JAX_ASCEND_SILU_THREADS" in proc.stdout and "kernel ISA: scalar" in proc.stdout
    assert "is ignored" not in proc.stdout


# ------------------------------------------------------------------ route --

def test_route_returns_python_constants_as_plain_python_values():
    out = jas.route(lambda v: (jnp.sum(jax.nn.silu(v)), 3, 2.5, True, 1j))(jnp.ones(3))
    assert [type(v) for v in out[1:]] == [int, float, bool, complex]
    assert out[1:] == (3, 2.5, True, 1j)


def test_route_names_itself_when_f_returns_a_non_array():
    def f(v):
        return {"loss": jnp.sum(v), "tag": "epoch 1"}

    with pytest.raises(TypeError, match=r"^route\(.*f\): the routed function returned str 'epoch 1' at output\['tag'\]"):
        jas.route(f)(jnp.ones(3))


# -------------------------------------------------------------------- CLI --

def test_version_flag():
    proc = subprocess.run([sys.executable, "-m", "jax_ascend_silu", "--version"], capture_output=True, text=True,
                          cwd=HERE, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == f"jax_ascend_silu {jas.__version__}"


def test_bench_markdown_without_markers_is_an_error(tmp_path):
    target = tmp_path / "notes.md"
    target.write_text("# Notes\n\nno markers here\n")
    proc = subprocess.run([sys.executable, "-m", "jax_ascend_silu", "bench", "--only", "loop", "--markdown",
                           str(target), "--out", str(tmp_path / "out")], capture_output=True, text=True,
                          cwd=HERE, timeout=300)
    assert proc.returncode == 2 and "has no <!-- bench table: begin -->" in proc.stderr, proc.stderr
    assert target.read_text() == "# Notes\n\nno markers here\n"
    assert not (tmp_path / "out").exists()


def test_one_dtype_table():
    """The dtypes the JAX layer takes (operands.DTYPES) are the ones the compiled
    kernel's phase 1 plans, and the ones the tests' reference covers."""
    from checks import kernel_module
    from jax_ascend_silu import operands

    kernel = kernel_module()
    for name, dtype in operands.DTYPES.items():
        views = [kernel.View(None, (4,), dtype=name, storage_numel=4) for _ in range(3)]
        assert kernel.plan(*views) == (kernel.SUCCESS, 0), name
        g = jnp.ones(4, dtype)
        assert np.asarray(jas.silu_grad(g, g)).dtype == dtype, name
    wide = np.ones(4, np.float64)  # a float dtype the kernel does not take: refused by both layers
    assert kernel.run(kernel.View(wide, (4,)), kernel.View(wide, (4,)), kernel.View(wide, (4,))) == \
        kernel.ERR_PARAM_INVALID
    with jax.enable_x64(True), pytest.raises(TypeError, match="supported dtypes are float32, float16, bfloat16"):
        jas.silu_grad(jnp.ones(4, jnp.float64), jnp.ones(4, jnp.float64))
    assert [d.name for d in reference.DTYPES] == list(operands.DTYPES)


@pytest.mark.parametrize("dtype", reference.DTYPES, ids=lambda d: d.name)
def test_second_derivative_accuracy(dtype):
    """hessian (forward over reverse) and grad of grad give s''(x): within one
    ulp for the half types; for float32 within 2^-22 absolute (s'' crosses zero
    at +-2.39936, where relative error means nothing)."""
    x = _inputs(dtype)
    exact = reference.silu_second_derivative(x.astype(np.float64))
    for fn in (jax.vmap(jax.hessian(jas.silu)), jax.vmap(jax.grad(jax.grad(jas.silu)))):
        out = np.asarray(jax.jit(fn)(jnp.asarray(x)))
        if np.dtype(dtype) == np.float32:
            assert np.nanmax(np.abs(out.astype(np.float64) - exact)) <= 2.0**-22
            assert np.array_equal(np.isnan(out), np.isnan(exact))
        else:
            assert _xla_ulp_error(out, exact, dtype).max() <= 1.0
