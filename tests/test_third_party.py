"""route() on models from libraries this project did not write: Equinox
(eqx.partition/combine, filter_grad, filter_jit, vmapped module calls), Haiku
(route(net.apply); route inside hk.transform is refused with what to do) and a
Flax linen SwiGLU block in bfloat16. Gradients match jax.nn.silu's autodiff and
the compiled program has one SiluGrad call per SiLU.

Each library is an optional extra (pyproject.toml: equinox, haiku, flax); a
test whose library is absent is skipped, naming it."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_ascend_silu as jas
from checks import assert_trees_close, custom_calls, swiglu_and_silu_calls


def _data(n=7, d_in=6, d_out=3, seed=11):
    kx, ky = jax.random.split(jax.random.PRNGKey(seed))
    return jax.random.normal(kx, (n, d_in)) * 2.0, jax.random.normal(ky, (n, d_out))


# ------------------------------------------------------------------ Equinox --

def _equinox_mlp():
    eqx = pytest.importorskip("equinox", reason="Equinox not installed (extra [equinox])")
    # Two hidden layers, each followed by jax.nn.silu: two SiLU calls per example.
    model = eqx.nn.MLP(6, 3, width_size=16, depth=2, activation=jax.nn.silu, key=jax.random.PRNGKey(0))
    return eqx, model


def _eqx_loss(model, x, y):
    return jnp.mean((jax.vmap(model)(x) - y) ** 2)  # one module call per example


def test_equinox_filter_grad_and_filter_jit():
    eqx, model = _equinox_mlp()
    x, y = _data()
    expected = eqx.filter_grad(_eqx_loss)(model, x, y)
    routed = eqx.filter_jit(eqx.filter_grad(jas.route(_eqx_loss)))(model, x, y)
    assert_trees_close(eqx.filter(routed, eqx.is_array), eqx.filter(expected, eqx.is_array))
    value, grads = eqx.filter_jit(eqx.filter_value_and_grad(jas.route(_eqx_loss)))(model, x, y)
    np.testing.assert_allclose(value, _eqx_loss(model, x, y), rtol=1e-6)
    assert_trees_close(eqx.filter(grads, eqx.is_array), eqx.filter(expected, eqx.is_array))


def test_equinox_partition_combine_one_custom_call_per_silu():
    eqx, model = _equinox_mlp()
    x, y = _data()
    params, static = eqx.partition(model, eqx.is_inexact_array)

    def loss(p, x, y):
        return _eqx_loss(eqx.combine(p, static), x, y)

    assert_trees_close(jax.grad(jas.route(loss))(params, x, y), jax.grad(loss)(params, x, y))
    # vmap over the batch batches each SiLU's call; it stays one call per SiLU.
    assert custom_calls(jax.grad(jas.route(loss)), params, x, y) == 2
    assert custom_calls(jax.grad(loss), params, x, y) == 0


def test_equinox_training_steps_follow_the_original():
    eqx, model = _equinox_mlp()
    x, y = _data(seed=12)

    def train(loss_fn, model):
        @eqx.filter_jit
        def step(m):
            value, grads = eqx.filter_value_and_grad(loss_fn)(m, x, y)
            return eqx.apply_updates(m, jax.tree.map(lambda g: -0.05 * g, grads)), value

        values = []
        for _ in range(5):
            model, value = step(model)
            values.append(float(value))
        return values

    ours, theirs = train(jas.route(_eqx_loss), model), train(_eqx_loss, model)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    assert ours[-1] < ours[0]


def _sgd_steps(step, params, state, steps=4):
    """Runs step(params, state) -> (params, state, loss) and returns the losses and final values."""
    losses = []
    for _ in range(steps):
        params, state, value = step(params, state)
        losses.append(float(value))
    return losses, params, state


def _assert_same_run(ours, theirs):
    """Same losses step for step, same state (running statistics), parameters within rounding."""
    (losses, params, state), (losses0, params0, state0) = ours, theirs
    np.testing.assert_allclose(losses, losses0, rtol=1e-5)
    assert_trees_close(state, state0, 1e-5, 1e-6)
    assert_trees_close(params, params0, 1e-4, 1e-6)


def test_equinox_batch_norm_state_follows_the_original():
    eqx = pytest.importorskip("equinox", reason="Equinox not installed (extra [equinox])")
    x, y = _data(n=8, d_in=4, d_out=2)

    class Net(eqx.Module):
        a: eqx.nn.Linear
        bn: eqx.nn.BatchNorm
        b: eqx.nn.Linear

        def __init__(self, key):
            ka, kb = jax.random.split(key)
            self.a = eqx.nn.Linear(4, 16, key=ka)
            self.bn = eqx.nn.BatchNorm(16, axis_name="batch", mode="ema", momentum=0.5)
            self.b = eqx.nn.Linear(16, 2, key=kb)

        def __call__(self, x, state):
            h, state = self.bn(self.a(x), state)
            return self.b(jax.nn.silu(h)), state

    def loss(model, state, x, y):
        out, state = jax.vmap(model, axis_name="batch", in_axes=(0, None), out_axes=(0, None))(x, state)
        return jnp.mean((out - y) ** 2), state

    def train(loss_fn):
        @eqx.filter_jit
        def step(model, state):
            (value, state), grads = eqx.filter_value_and_grad(loss_fn, has_aux=True)(model, state, x, y)
            return eqx.apply_updates(model, jax.tree.map(lambda g: -0.1 * g, grads)), state, value

        model, state = eqx.nn.make_with_state(Net)(jax.random.PRNGKey(0))
        losses, model, state = _sgd_steps(step, model, state)
        return losses, eqx.filter(model, eqx.is_array), state

    ours, theirs = train(jas.route(loss)), train(loss)
    _assert_same_run(ours, theirs)
    initial = eqx.nn.make_with_state(Net)(jax.random.PRNGKey(0))[1]
    assert not all(np.array_equal(a, b) for a, b in zip(jax.tree.leaves(ours[2]), jax.tree.leaves(initial)))


# -------------------------------------------------------------------- Haiku --

def _haiku():
    return pytest.importorskip("haiku", reason="Haiku not installed (extra [haiku], dm-haiku)")


def _haiku_forward(hk):
    def forward(x):
        # Two hidden layers with jax.nn.silu; no activation after the last.
        return hk.nets.MLP([16, 16, 3], activation=jax.nn.silu)(x)

    return forward


def test_haiku_route_of_apply():
    hk = _haiku()
    x, y = _data()
    net = hk.without_apply_rng(hk.transform(_haiku_forward(hk)))
    params = net.init(jax.random.PRNGKey(1), x)

    def loss(apply):
        return lambda p, x, y: jnp.mean((apply(p, x) - y) ** 2)

    routed, original = loss(jas.route(net.apply)), loss(net.apply)
    np.testing.assert_allclose(routed(params, x, y), original(params, x, y), rtol=1e-6)
    assert_trees_close(jax.jit(jax.grad(routed))(params, x, y), jax.grad(original)(params, x, y))
    assert custom_calls(jax.grad(routed), params, x, y) == 2
    assert custom_calls(jax.grad(original), params, x, y) == 0


def test_haiku_apply_with_rng_through_route():
    hk = _haiku()
    x, y = _data()

    def forward(x):
        h = jax.nn.silu(hk.Linear(16)(x))
        h = hk.dropout(hk.next_rng_key(), 0.25, h)
        return hk.Linear(3)(h)

    net = hk.transform(forward)
    params = net.init(jax.random.PRNGKey(2), x)
    rng = jax.random.PRNGKey(3)

    def loss(apply):
        return lambda p: jnp.mean((apply(p, rng, x) - y) ** 2)

    assert_trees_close(jax.grad(loss(jas.route(net.apply)))(params), jax.grad(loss(net.apply))(params))
    assert custom_calls(jax.grad(loss(jas.route(net.apply))), params) == 1


def test_haiku_batch_norm_state_follows_the_original():
    hk = _haiku()
    x, y = _data(n=8, d_in=4, d_out=2)

    def forward(x):
        h = hk.BatchNorm(create_scale=True, create_offset=True, decay_rate=0.5)(hk.Linear(16)(x), is_training=True)
        return hk.Linear(2)(jax.nn.silu(h))

    net = hk.without_apply_rng(hk.transform_with_state(forward))
    params, state = net.init(jax.random.PRNGKey(1), x)

    def train(apply):
        def loss(p, s):
            out, s = apply(p, s, x)
            return jnp.mean((out - y) ** 2), s

        @jax.jit
        def step(p, s):
            (value, s), grads = jax.value_and_grad(loss, has_aux=True)(p, s)
            return jax.tree.map(lambda a, g: a - 0.1 * g, p, grads), s, value

        return _sgd_steps(step, params, state)

    ours, theirs = train(jas.route(net.apply)), train(net.apply)
    _assert_same_run(ours, theirs)
    assert not all(np.array_equal(a, b) for a, b in zip(jax.tree.leaves(ours[2]), jax.tree.leaves(state)))


@pytest.mark.parametrize("stage", ["init", "apply"])
def test_route_inside_haiku_transform_is_refused_with_what_to_do(stage):
    hk = _haiku()
    x, _ = _data()
    inside = hk.without_apply_rng(hk.transform(jas.route(_haiku_forward(hk))))
    with pytest.raises(RuntimeError, match=r"route\(.*forward\) was called inside a Haiku transform.*route\(net\.apply\)"):
        if stage == "init":
            inside.init(jax.random.PRNGKey(1), x)
        else:
            params = hk.without_apply_rng(hk.transform(_haiku_forward(hk))).init(jax.random.PRNGKey(1), x)
            inside.apply(params, x)


def test_route_outside_haiku_works_after_haiku_was_used():
    _haiku()  # imported: route must tell "inside a transform" from "haiku loaded"
    x = jnp.linspace(-2.0, 2.0, 5)
    grad = jax.grad(jas.route(lambda v: jnp.sum(jax.nn.silu(v))))(x)
    np.testing.assert_allclose(grad, jax.grad(lambda v: jnp.sum(jax.nn.silu(v)))(x), rtol=1e-6)


# ------------------------------------------------------- Flax linen, bfloat16 --

def test_flax_linen_swiglu_block_in_bfloat16():
    linen = pytest.importorskip("flax.linen", reason="Flax not installed (extra [flax])")

    class SwiGLU(linen.Module):  # written against Flax alone
        hidden: int = 32

        @linen.compact
        def __call__(self, x):
            dense = lambda n, name: linen.Dense(n, dtype=jnp.bfloat16, param_dtype=jnp.bfloat16, name=name)  # noqa: E731
            gate, up = dense(self.hidden, "gate")(x), dense(self.hidden, "up")(x)
            return dense(x.shape[-1], "down")(linen.silu(gate) * up)

    x = jax.random.normal(jax.random.PRNGKey(4), (8, 16), jnp.bfloat16)
    block = SwiGLU()
    variables = block.init(jax.random.PRNGKey(5), x)

    def loss(apply):
        return lambda v: jnp.mean(apply(v, x).astype(jnp.float32) ** 2)

    ours = jax.jit(jax.grad(loss(jas.route(block.apply))))(variables)
    theirs = jax.grad(loss(block.apply))(variables)
    assert all(g.dtype == jnp.bfloat16 for g in jax.tree.leaves(ours))
    # bfloat16 rounding: JAX's autodiff rounds s'(x) and products in bfloat16.
    assert_trees_close(ours, theirs, rtol=3e-2, atol=3e-3)
    # silu(gate) * up is one SwiGLU: one SwiGluGrad call, no SiluGrad call.
    assert swiglu_and_silu_calls(jax.grad(loss(jas.route(block.apply))), variables) == (1, 0)
