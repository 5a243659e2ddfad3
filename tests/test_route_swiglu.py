"""route(f) fuses each silu(a) * b of the traced program into one SwiGLU
operation (one SwiGluGrad call in the backward pass) as models write it, and
leaves alone what is not one; route_report says which and why.

Each pattern is written here as the model's source writes it (the source
named beside it); the checks read the traced program's report, the compiled
gradient's custom calls, and values against the unrouted function."""

import functools
import operator

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax.ad_checkpoint import checkpoint_name

import jax_ascend_silu as jas
import reference
from checks import assert_trees_close, swiglu_and_silu_calls

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [np.dtype(np.float32), BF16, np.dtype(np.float16)]
# Gradient tolerance (rtol, atol) against JAX's autodiff of the unrouted function,
# which rounds s'(a) and each product to the dtype where the fused call rounds once
# (bfloat16: a few of its 8 significand bits).
GRAD_TOL = {np.dtype(np.float32): (2e-5, 2e-6), BF16: (4e-2, 2e-2), np.dtype(np.float16): (8e-3, 4e-3)}


# ---------------------------------------------------------------- patterns --

def pair(g, u):
    return jax.nn.silu(g) * u


def pair_swapped(g, u):
    return u * jax.nn.silu(g)


def keras_hub(g, u):
    """keras-hub's Llama, Mistral and Qwen3 decoders: silu in float32, cast back, multiply(up, gate)."""
    gate = jax.nn.silu(g.astype(jnp.float32)).astype(g.dtype)
    return jnp.multiply(u, gate)


def maxtext(g, u):
    """MaxText's MlpBlock: checkpoint_name on wi_0 and wi_1, float32 activations, reduce(mul), cast."""
    activations = [jax.nn.silu(checkpoint_name(g, "mlpwi_0").astype(jnp.float32)),
                   checkpoint_name(u, "mlpwi_1").astype(jnp.float32)]
    return functools.reduce(operator.mul, activations).astype(g.dtype)


def llama_port(g, u):
    """The usual JAX Llama ports: silu(gate).astype(dtype) * up.astype(dtype) inside named_scope,
    here with float32 projections and a bfloat16 product."""
    with jax.named_scope("mlp"):
        g32, u32 = g.astype(jnp.float32) * 1.5, u.astype(jnp.float32) * 1.5  # float32 einsum outputs
        return jax.nn.silu(g32).astype(g.dtype) * u32.astype(g.dtype)


def tag_between(g, u):
    return checkpoint_name(jax.nn.silu(g), "act") * u


def gate_broadcast(g, u):
    """One gate per row: the product broadcasts silu's result."""
    return jax.nn.silu(g[:, :1]) * u


def gate_rank_broadcast(g, u):
    """A lower-rank gate: jnp adds a broadcast_in_dim between silu and the product."""
    return jax.nn.silu(g[0]) * u


def split_halves(g, u):
    h = jnp.concatenate([g, u], axis=-1)
    first, second = jnp.split(h, 2, axis=-1)
    return jax.nn.silu(first) * second


def slice_halves(g, u):
    h = jnp.concatenate([g, u], axis=-1)
    d = h.shape[-1] // 2
    return jax.nn.silu(h[..., :d]) * h[..., d:]


def fused_mlp(g, u):
    """MaxText's fused_mlp: one projection of shape [..., 2, mlp], its halves taken by index."""
    x = jnp.stack([g, u], axis=-2)[None]  # [1, tokens, 2, mlp]
    return (jax.nn.silu(x[:, :, 0, ...]) * x[:, :, 1, ...])[0]


# (function, packed)
FUSED = {f.__name__: (f, packed) for f, packed in [
    (pair, False), (pair_swapped, False), (keras_hub, False), (maxtext, False), (llama_port, False),
    (tag_between, False), (gate_broadcast, False), (gate_rank_broadcast, False),
    (split_halves, True), (slice_halves, True), (fused_mlp, True)]}


def _operands(dtype, shape=(6, 40), seed=0):
    rng = np.random.default_rng(seed)
    return (jnp.asarray(rng.standard_normal(shape) * 4, dtype), jnp.asarray(rng.standard_normal(shape), dtype))


def _loss(f):
    return lambda g, u: jnp.sum(f(g, u).astype(jnp.float32) ** 2)


# A sample by default (tests/sampling.py): every pattern and every dtype, not every pair.
@pytest.mark.combinatorial(cases=14)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("name", list(FUSED))
def test_pattern_is_fused_into_one_swiglu_call(name, dtype):
    f, packed = FUSED[name]
    g, u = _operands(dtype)
    assert jas.route_report(f)(g, u) == jas.RouteReport(swiglu=1, packed=int(packed))
    grad = jax.grad(_loss(jas.route(f)), argnums=(0, 1))
    assert swiglu_and_silu_calls(grad, g, u) == (1, 0)
    assert swiglu_and_silu_calls(jax.grad(_loss(f), argnums=(0, 1)), g, u) == (0, 0)
    assert_trees_close(grad(g, u), jax.grad(_loss(f), argnums=(0, 1))(g, u), *GRAD_TOL[dtype])


@pytest.mark.combinatorial(cases=8)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("name", ["pair", "keras_hub", "maxtext", "llama_port", "slice_halves"])
def test_fused_values_within_the_ulp_contract(name, dtype):
    """The fused value is silu(a) * b rounded once: within half an ulp of the exact product of
    the program's operands (float32: jax.nn.silu's own error). Against the program's value: at
    most one ulp apart where the program computes silu in float32 (keras-hub's and MaxText's
    casts, or float32 throughout) and silu's result is a normal number of the product's dtype
    (the program rounds it there, then the product: a double rounding); elsewhere no farther
    than the program's own error plus half an ulp, since jax.nn.silu in bfloat16 or float16
    rounds on the way (and loses bits where its result underflows) where the fused value does not."""
    f = FUSED[name][0]
    g, u = _operands(dtype, shape=(64, 512), seed=1)
    routed, plain = jax.jit(jas.route(f))(g, u), jax.jit(f)(g, u)
    gate, up = np.asarray(g, np.float64), np.asarray(u, np.float64)
    if name == "llama_port":  # the program's float32 projections, its up rounded to the product's dtype
        gate = np.asarray(g.astype(jnp.float32) * 1.5, np.float64)
        up = np.asarray((u.astype(jnp.float32) * 1.5).astype(dtype), np.float64)
    silu_exact = gate / (1 + np.exp(-gate))
    exact = silu_exact * up
    out = np.dtype(routed.dtype)
    assert out == np.dtype(plain.dtype) and routed.shape == plain.shape
    ulp = reference.ulp_of(exact, out)
    to_exact = reference.ulp_error(np.asarray(routed), exact, out)
    to_program = np.abs(np.asarray(routed, np.float64) - np.asarray(plain, np.float64)) / ulp
    program_error = reference.ulp_error(np.asarray(plain), exact, out)
    assert to_exact.max() <= (reference.MAX_ULP[out] if out == np.float32 else 0.51), to_exact.max()
    assert (to_program <= program_error + 0.51).all(), (to_program - program_error).max()
    if out == np.float32 or name in ("keras_hub", "maxtext", "llama_port"):
        normal = np.abs(silu_exact) >= float(ml_dtypes.finfo(out).smallest_normal)
        assert to_program[normal].max() <= 1.0, to_program[normal].max()


# -------------------------------------------------------- left to SiluGrad --

def used_twice(g, u):
    s = jax.nn.silu(g)
    return s * u + s


def glu(g, u):
    return jax.nn.glu(jnp.concatenate([g, u], axis=-1))


def not_elementwise(g, u):
    return jax.nn.silu(g) @ u.T


def silu_under_stop_gradient(g, u):
    return jax.lax.stop_gradient(jax.nn.silu(g)) * u


def up_under_stop_gradient(g, u):
    return jax.nn.silu(g) * jax.lax.stop_gradient(u)


def bfloat16_silu_float32_product(g, u):
    return jax.nn.silu(g.astype(jnp.bfloat16)).astype(jnp.float32) * u


def constant_factor(g, u):
    return jax.nn.silu(g) * 2.0 + u


def dropout_mask(g, u):
    """Haiku's and Flax's dropout multiply by a mask of random bits: no SwiGLU."""
    keep = jax.random.bernoulli(jax.random.key(0), 0.75, g.shape)
    return jax.nn.silu(g) * keep / 0.75 + u


def constant_array_factor(g, u):
    return jax.nn.silu(g) * jnp.arange(g.shape[-1], dtype=g.dtype) + u


# (function, SiluGrad calls in the gradient, part of the reason or None when it is no SwiGLU-like pattern)
LEFT = {f.__name__: (f, calls, why) for f, calls, why in [
    (used_twice, 1, "used more than once"),
    (glu, 0, None),
    (not_elementwise, 1, None),
    (silu_under_stop_gradient, 0, "through stop_gradient"),
    (up_under_stop_gradient, 1, "under stop_gradient"),
    (bfloat16_silu_float32_product, 1, "rounded to bfloat16 before the float32 product"),
    (constant_factor, 1, "constant"),
    (dropout_mask, 1, "carries no gradient"),
    (constant_array_factor, 1, "carries no gradient"),
]}


@pytest.mark.parametrize("name", list(LEFT))
def test_not_a_swiglu_is_left_to_silugrad(name):
    f, calls, why = LEFT[name]
    g, u = _operands(np.float32)
    report = jas.route_report(f)(g, u)
    sites = 0 if f is glu else 1
    assert (report.swiglu, report.packed, report.silu) == (0, 0, sites)
    if why is None:
        assert report.unfused == ()
    else:
        (reason,) = report.unfused
        assert why in reason and "test_route_swiglu.py" in reason, reason
    grad = jax.grad(_loss(jas.route(f)), argnums=(0, 1))
    assert swiglu_and_silu_calls(grad, g, u) == (0, calls)
    np.testing.assert_allclose(jas.route(f)(g, u), f(g, u), rtol=1e-6)
    # The bfloat16 silu's gradient: SiluGrad's against autodiff's, each rounded to bfloat16.
    tol = GRAD_TOL[BF16 if f is bfloat16_silu_float32_product else np.dtype(np.float32)]
    assert_trees_close(grad(g, u), jax.grad(_loss(f), argnums=(0, 1))(g, u), *tol)


def test_plain_silus_still_go_to_silugrad_beside_a_fused_one():
    g, u = _operands(np.float32)

    def f(g, u):
        return jax.nn.silu(jax.nn.silu(g) * u) + jax.nn.silu(u)

    assert jas.route_report(f)(g, u) == jas.RouteReport(swiglu=1, silu=2)
    assert swiglu_and_silu_calls(jax.grad(_loss(jas.route(f)), argnums=(0, 1)), g, u) == (1, 2)


def test_silu_of_silu_times_silu():
    """Both factors are silu results: one is fused as the gate, the other (the up operand) goes to SiluGrad."""
    g, u = _operands(np.float32)

    def f(g, u):
        return jax.nn.silu(g) * jax.nn.silu(u)

    assert jas.route_report(f)(g, u) == jas.RouteReport(swiglu=1, silu=1)
    grad = jax.grad(_loss(jas.route(f)), argnums=(0, 1))
    assert swiglu_and_silu_calls(grad, g, u) == (1, 1)
    assert_trees_close(grad(g, u), jax.grad(_loss(f), argnums=(0, 1))(g, u), 2e-5, 2e-6)


def test_fusion_inside_scan_checkpoint_and_jit_counts_each_site():
    g, u = _operands(np.float32)

    @jax.jit
    def layer(g, u):
        return jax.checkpoint(pair)(g, u)

    def f(g, u):
        out, _ = jax.lax.scan(lambda c, _: (layer(c, u) * 0.5, None), g, length=3)
        return layer(out, u) + layer(u, out)

    # The scan body's site, then the two jit calls after it (one jaxpr, two sites).
    assert jas.route_report(f)(g, u) == jas.RouteReport(swiglu=3)
    grad = jax.grad(_loss(jas.route(f)), argnums=(0, 1))
    assert swiglu_and_silu_calls(grad, g, u) == (3, 0)
    assert_trees_close(grad(g, u), jax.grad(_loss(f), argnums=(0, 1))(g, u), 1e-4, 1e-5)


def test_route_report_leaves_nnx_arguments_and_computes_nothing():
    nnx = pytest.importorskip("flax.nnx", reason="Flax not installed (extra [flax])")
    model = nnx.Sequential(nnx.Linear(4, 8, rngs=nnx.Rngs(0)), nnx.Dropout(0.5, rngs=nnx.Rngs(dropout=1)))
    x = jnp.ones((2, 4))

    def f(model, x):
        h = model(x)
        return jax.nn.silu(h) * h

    before = int(model.layers[1].rngs.count[...])
    assert jas.route_report(f)(model, x) == jas.RouteReport(swiglu=1)
    assert int(model.layers[1].rngs.count[...]) == before
    jas.route(f)(model, x)
    assert int(model.layers[1].rngs.count[...]) == before + 1  # routed and run, it draws as unrouted


def test_route_report_refuses_what_is_not_callable():
    with pytest.raises(TypeError, match="route_report: expected the function"):
        jas.route_report(3)

