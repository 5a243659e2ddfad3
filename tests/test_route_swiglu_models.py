"""route fuses the SwiGLU feed-forwards of models written against Flax linen
(MaxText's MlpBlock, under nn.remat), Flax NNX and Equinox, as their sources
write them: one SwiGluGrad call per feed-forward, no SiluGrad call left, and
gradients and training steps as unrouted. keras-hub's backbones are in
test_keras.py. Each library is an optional extra; without it its tests skip,
naming the extra."""

import functools
import operator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.ad_checkpoint import checkpoint_name

import jax_ascend_silu as jas
from checks import assert_trees_close, swiglu_and_silu_calls

# Gradients against JAX's autodiff, per compute dtype: the fused call rounds once where
# autodiff rounds s'(a) and each product (bfloat16: 8 significand bits).
TOL = {"float32": (2e-5, 2e-6), "bfloat16": (4e-2, 4e-3)}


# ------------------------------------------------------- MaxText's MlpBlock --

def _maxtext_block(linen):
    class MlpBlock(linen.Module):
        """MaxText's MlpBlock (layers/linears.py) as it computes a Llama MLP
        (mlp_activations: ["silu", "linear"]), without its sharding and quantisation."""

        intermediate_dim: int = 32
        activations: tuple[str, ...] = ("silu", "linear")
        dtype: Any = jnp.float32
        fused_mlp: bool = False
        activations_in_float32: bool = True

        @linen.compact
        def __call__(self, inputs):
            act = {"silu": linen.silu, "linear": lambda x: x}
            dense = functools.partial(linen.DenseGeneral, dtype=self.dtype, use_bias=False)
            activations = []
            if self.fused_mlp:
                x = dense((len(self.activations), self.intermediate_dim), name="wi")(inputs)
                for idx, act_fn in enumerate(self.activations):
                    activations.append(act[act_fn](x[:, :, idx, ...]))
            else:
                for idx, act_fn in enumerate(self.activations):
                    dense_name = f"wi_{idx}"
                    x = dense(self.intermediate_dim, name=dense_name)(inputs)
                    x = checkpoint_name(x, "mlp" + dense_name)
                    if self.activations_in_float32:
                        x = x.astype(jnp.float32)
                    activations.append(act[act_fn](x))
            x = functools.reduce(operator.mul, activations).astype(self.dtype)
            return dense(inputs.shape[-1], name="wo")(x)

    # MaxText's remat policies save the named projections (e.g. "save_qkv_proj" and "minimal" keep
    # mlpwi_0 and mlpwi_1): the fused SwiGLU's operands, so its backward recomputes no matmul.
    policy = jax.checkpoint_policies.save_only_these_names("mlpwi_0", "mlpwi_1")
    return linen.remat(MlpBlock, policy=policy)


@pytest.mark.parametrize("fused_mlp", [False, True], ids=["wi_0-wi_1", "fused_mlp"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_maxtext_mlp_block_under_remat(dtype, fused_mlp):
    linen = pytest.importorskip("flax.linen", reason="Flax not installed (extra [flax])")
    block = _maxtext_block(linen)(dtype=jnp.dtype(dtype), fused_mlp=fused_mlp)
    x = jax.random.normal(jax.random.key(0), (2, 5, 16), jnp.dtype(dtype))
    y = jax.random.normal(jax.random.key(1), (2, 5, 16), jnp.float32)
    params = block.init(jax.random.key(2), x)

    def loss(apply):
        return lambda p: jnp.mean((apply(p, x).astype(jnp.float32) - y) ** 2)

    report = jas.route_report(block.apply)(params, x)
    assert report == jas.RouteReport(swiglu=1, packed=int(fused_mlp))
    grad = jax.grad(loss(jas.route(block.apply)))
    assert swiglu_and_silu_calls(grad, params) == (1, 0)
    assert_trees_close(jax.jit(grad)(params), jax.grad(loss(block.apply))(params), *TOL[dtype])


# --------------------------------------------------------------- Flax NNX --

def test_nnx_swiglu_mlp_trains_as_unrouted():
    nnx = pytest.importorskip("flax.nnx", reason="Flax not installed (extra [flax])")
    optax = pytest.importorskip("optax", reason="optax not installed (Flax brings it: extra [flax])")

    class SwiGLU(nnx.Module):
        def __init__(self, d, f, rngs):
            self.gate = nnx.Linear(d, f, use_bias=False, rngs=rngs)
            self.up = nnx.Linear(d, f, use_bias=False, rngs=rngs)
            self.down = nnx.Linear(f, d, use_bias=False, rngs=rngs)

        def __call__(self, x):
            return self.down(nnx.silu(self.gate(x)) * self.up(x))

    def loss(model, x, y):
        return jnp.mean((model(x) - y) ** 2)

    x, y = jax.random.normal(jax.random.key(0), (8, 16)), jax.random.normal(jax.random.key(1), (8, 16))
    runs = []
    for f in (jas.route(loss), loss):
        model = SwiGLU(16, 48, nnx.Rngs(0))
        optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)

        @nnx.jit
        def train_step(model, optimizer, f=f):
            value, grads = nnx.value_and_grad(f)(model, x, y)
            optimizer.update(model, grads)
            return value

        runs.append(([float(train_step(model, optimizer)) for _ in range(4)], nnx.state(model, nnx.Param)))
    (losses, state), (losses0, state0) = runs
    np.testing.assert_allclose(losses, losses0, rtol=1e-5)
    assert losses[-1] < losses[0]
    assert_trees_close(state, state0, 1e-5, 1e-6)
    model = SwiGLU(16, 48, nnx.Rngs(0))
    assert jas.route_report(loss)(model, x, y) == jas.RouteReport(swiglu=1)
    # NNX's functional API: the compiled gradient of the merged model.
    graphdef, params = nnx.split(model)
    merged = lambda p: loss(nnx.merge(graphdef, p), x, y)  # noqa: E731
    assert swiglu_and_silu_calls(jax.grad(jas.route(merged)), params) == (1, 0)


# ---------------------------------------------------------------- Equinox --

def test_equinox_swiglu_mlp_trains_as_unrouted():
    eqx = pytest.importorskip("equinox", reason="Equinox not installed (extra [equinox])")

    class SwiGLU(eqx.Module):
        gate: Any
        up: Any
        down: Any

        def __init__(self, d, f, key):
            k1, k2, k3 = jax.random.split(key, 3)
            self.gate = eqx.nn.Linear(d, f, use_bias=False, key=k1)
            self.up = eqx.nn.Linear(d, f, use_bias=False, key=k2)
            self.down = eqx.nn.Linear(f, d, use_bias=False, key=k3)

        def __call__(self, x):
            return self.down(jax.nn.silu(self.gate(x)) * self.up(x))

    def loss(model, x, y):
        return jnp.mean((jax.vmap(model)(x) - y) ** 2)

    x, y = jax.random.normal(jax.random.key(0), (8, 16)), jax.random.normal(jax.random.key(1), (8, 16))
    runs = []
    for f in (jas.route(loss), loss):
        @eqx.filter_jit
        def train_step(model, f=f):
            value, grads = eqx.filter_value_and_grad(f)(model, x, y)
            return value, eqx.apply_updates(model, jax.tree.map(lambda g: -0.1 * g, grads))

        model, losses = SwiGLU(16, 48, jax.random.key(2)), []
        for _ in range(4):
            value, model = train_step(model)
            losses.append(float(value))
        runs.append((losses, model))
    (losses, model), (losses0, model0) = runs
    np.testing.assert_allclose(losses, losses0, rtol=1e-5)
    assert losses[-1] < losses[0]
    assert_trees_close(eqx.filter(model, eqx.is_array), eqx.filter(model0, eqx.is_array), 1e-5, 1e-6)
    assert jas.route_report(loss)(model, x, y) == jas.RouteReport(swiglu=1)
    assert swiglu_and_silu_calls(jax.grad(jas.route(loss)), model, x, y) == (1, 0)
