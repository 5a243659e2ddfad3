"""silu and silu_grad inside lax.scan, fori_loop, cond and jax.checkpoint, and
writing the result over a donated grad_output."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jax_ascend_silu as jas
import reference
from checks import HLO_CALL
from jax_ascend_silu._ffi import TARGET


def _deep_net(activation, depth=4):
    """`depth` residual SiLU layers sharing weights, as a function of (w, x)."""
    def layer(h, w):
        return h + activation(h @ w), None

    def net(w, x):
        h, _ = lax.scan(lambda h, _: layer(h, w), x, None, length=depth)
        return jnp.sum(h**2)

    return net


def _problem():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((8, 8)) * 0.3).astype(np.float32), rng.standard_normal((16, 8)).astype(np.float32)


def test_grad_through_scan():
    w, x = _problem()
    fn = jax.jit(jax.grad(_deep_net(jas.silu)))
    assert TARGET in fn.lower(w, x).as_text()
    np.testing.assert_allclose(fn(w, x), jax.grad(_deep_net(jax.nn.silu))(w, x), rtol=1e-4, atol=1e-4)


def test_silu_grad_as_a_scan_body():
    rng = np.random.default_rng(1)
    gs = rng.standard_normal((5, 3, 7)).astype(np.float32)
    x = (rng.standard_normal((7,)) * 3).astype(np.float32)
    _, out = jax.jit(lambda gs, x: lax.scan(lambda c, g: (c, jas.silu_grad(g, c)), x, gs))(gs, x)
    reference.assert_silu_grad(out, gs, x[None, None], np.float32)


def test_fori_loop_accumulates_silu_grad():
    x = np.linspace(-3, 3, 12, dtype=np.float32)
    # g <- silu_grad(g, x), n times: g * s'(x)**n.
    out = jax.jit(lambda x: lax.fori_loop(0, 3, lambda _, g: jas.silu_grad(g, x), jnp.ones_like(x)))(x)
    np.testing.assert_allclose(out, reference.silu_derivative(x) ** 3, rtol=1e-5)


def test_cond_branches():
    x = np.linspace(-3, 3, 12, dtype=np.float32)
    fn = jax.jit(lambda p, x: lax.cond(p, lambda v: jas.silu_grad(2.0, v), lambda v: jnp.zeros_like(v), x))
    reference.assert_silu_grad(fn(True, x), np.full_like(x, 2.0), x, np.float32)
    np.testing.assert_array_equal(fn(False, x), 0.0)


@pytest.mark.parametrize("policy", [None, jax.checkpoint_policies.nothing_saveable,
                                    jax.checkpoint_policies.dots_saveable],
                         ids=["default", "nothing_saveable", "dots_saveable"])
def test_checkpoint(policy):
    w, x = _problem()

    def net(activation):
        layer = jax.checkpoint(lambda h, w: activation(h @ w), policy=policy)
        return lambda w, x: jnp.sum(layer(layer(x, w), w) ** 2)

    fn = jax.jit(jax.grad(net(jas.silu)))
    assert TARGET in fn.lower(w, x).as_text()
    np.testing.assert_allclose(fn(w, x), jax.grad(net(jax.nn.silu))(w, x), rtol=1e-4, atol=1e-4)


def test_remat_scan_of_grad_of_grad():
    x = np.linspace(-4, 4, 9, dtype=np.float32)
    step = jax.checkpoint(lambda c, v: (c + jax.grad(jax.grad(jas.silu))(v), None))
    total, _ = jax.jit(lambda xs: lax.scan(step, jnp.float32(0), xs))(x)
    np.testing.assert_allclose(total, reference.silu_second_derivative(x).sum(), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- donation --

def _compile(fn, *args, donate=()):
    return jax.jit(fn, donate_argnums=donate).lower(*args).compile()


def _custom_call_line(hlo: str) -> str:
    (line,) = [text for text in hlo.splitlines() if HLO_CALL in text]
    return line


def test_donated_grad_output_is_written_in_place():
    g_host = np.full((256, 512), 2.0, np.float32)
    x = jnp.linspace(-4, 4, 256 * 512, dtype=jnp.float32).reshape(256, 512)
    g = jnp.asarray(g_host)  # (a NumPy view of g would keep its buffer from being donated)
    compiled = _compile(functools.partial(jas.silu_grad, overwrite_grad_output=True), g, x, donate=(0,))
    hlo = compiled.as_text()
    assert "input_output_alias={ {}: (0, {}" in hlo  # the program's output is parameter 0's buffer
    line = _custom_call_line(hlo)
    assert "output_to_operand_aliasing={{}: (0, {})}" in line  # ... written by the custom call itself
    assert " copy(" not in hlo  # and no copy of grad_output is made first
    stats = compiled.memory_analysis()
    assert stats.alias_size_in_bytes == g.nbytes
    assert stats.temp_size_in_bytes < g.nbytes  # no separate output buffer
    out = compiled(g, x)
    assert g.is_deleted()
    reference.assert_silu_grad(out, g_host, np.asarray(x), np.float32)


def test_not_donated_grad_output_is_left_intact():
    g = jnp.full((64, 64), 2.0, jnp.float32)
    x = jnp.ones((64, 64), jnp.float32)
    out = jax.jit(jas.silu_grad)(g, x)
    assert not g.is_deleted()
    np.testing.assert_array_equal(g, 2.0)
    reference.assert_silu_grad(out, np.asarray(g), np.asarray(x), np.float32)


def test_direct_call_writes_a_fresh_result_without_copying_grad_output():
    g, x = jnp.ones((256, 512), jnp.float32), jnp.ones((256, 512), jnp.float32)
    hlo = _compile(jas.silu_grad, g, x).as_text()
    assert "output_to_operand_aliasing" not in _custom_call_line(hlo)
    assert " copy(" not in hlo  # writing over the live g would make XLA copy it first


def test_broadcast_grad_output_is_not_aliased():
    g, x = jnp.ones((64,), jnp.float32), jnp.ones((8, 64), jnp.float32)
    assert "output_to_operand_aliasing" not in _custom_call_line(_compile(jas.silu_grad, g, x).as_text())


def test_backward_pass_reuses_the_incoming_gradient_buffer():
    x = jnp.ones((256, 512), jnp.float32)
    compiled = _compile(jax.grad(lambda v: jnp.sum(jas.silu(v) ** 2)), x)
    assert "output_to_operand_aliasing={{}: (0, {})}" in _custom_call_line(compiled.as_text())
    assert compiled.memory_analysis().temp_size_in_bytes < x.nbytes
