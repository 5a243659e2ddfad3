"""route() in Keras 3 on the JAX backend: Keras runs `activation="silu"`,
`keras.activations.silu` and `keras.ops.silu` through jax.nn.silu, so a routed
training step runs their backward through SiluGrad. Both of docs/dropin.md's
recipes: the stateless loop (model.stateless_call inside jax.value_and_grad),
and model.fit through a model whose compute_loss_and_updates is routed, in
float32 and mixed_float16. Routed and unrouted training agree step for step,
non-trainable state (BatchNormalization statistics, Dropout's seed) included.

Keras is an optional extra (pyproject.toml: keras; keras-hub for its Llama
backbone); without it the module is skipped, naming the extra."""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

# Keras picks its backend when first imported; these tests are about its JAX backend.
os.environ.setdefault("KERAS_BACKEND", "jax")
keras = pytest.importorskip("keras", reason="Keras 3 not installed (extra [keras])")
if keras.backend.backend() != "jax":
    pytest.skip(f"Keras runs on its {keras.backend.backend()} backend here; route needs KERAS_BACKEND=jax",
                allow_module_level=True)

import jax_ascend_silu as jas  # noqa: E402
from checks import HLO_CALL, HLO_SWIGLU_CALL, assert_close_at_scale, assert_trees_close, custom_calls  # noqa: E402


class RoutedModel(keras.Model):
    """docs/dropin.md's fit recipe: every SiLU backward of the training step through SiluGrad."""

    def compute_loss_and_updates(self, *args, **kwargs):
        return jas.route(super().compute_loss_and_updates)(*args, **kwargs)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((16, 4)).astype("float32"), rng.standard_normal((16, 2)).astype("float32")


def _values(variables):
    return [np.asarray(v.value) for v in variables]


# --------------------------------------------------------------- model.fit --

def _fit(model_class, data, epochs):
    """A Dense(silu) + BatchNormalization + Dropout model trained by fit from a fixed seed; its loss
    after each of the 2 * epochs steps."""
    keras.utils.set_random_seed(0)
    inputs = keras.Input((4,))
    h = keras.layers.Dense(16, activation="silu")(inputs)
    h = keras.layers.Dropout(0.25, seed=1)(keras.layers.BatchNormalization(momentum=0.5)(h))
    model = model_class(inputs, keras.layers.Dense(2)(h))
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    losses = []  # after every batch (Keras reports the epoch's running mean)
    record = keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: losses.append(logs["loss"]))
    history = model.fit(*data, epochs=epochs, batch_size=8, shuffle=False, verbose=0, callbacks=[record])
    assert len(losses) == 2 * epochs and history.history["loss"] == losses[1::2]
    return model, losses


def _train_step_custom_calls(model, data):
    """SiluGrad calls in the program of one training step, as fit runs it (model.train_step)."""
    state = tuple(_values(v) for v in (model.trainable_variables, model.non_trainable_variables,
                                       model.optimizer.variables, model.metrics_variables))
    batch = tuple(a[:8] for a in data)
    return custom_calls(lambda s, d: model.train_step(s, d), state, batch)


@pytest.mark.parametrize("policy", ["float32", "mixed_float16"])
def test_fit_with_routed_compute_loss_and_updates_follows_plain_fit(data, policy):
    keras.mixed_precision.set_global_policy(policy)
    try:
        model, losses = _fit(RoutedModel, data, epochs=2)  # 2 batches an epoch: 4 steps
        model0, losses0 = _fit(keras.Model, data, epochs=2)
        if policy == "mixed_float16":
            # compile wraps the optimizer in a LossScaleOptimizer; the SiLU runs in float16.
            assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
            assert model.layers[1].compute_dtype == "float16"
        calls = _train_step_custom_calls(model, data)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    # float16 activations: the two backward passes round differently (JAX's autodiff in float16).
    rtol, atol = (1e-5, 1e-6) if policy == "float32" else (2e-3, 2e-3)
    np.testing.assert_allclose(losses, losses0, rtol=rtol)
    paths = [v.path for v in model.variables]
    assert any("moving_mean" in p for p in paths) and any("seed_generator" in p for p in paths)
    for path, a, b in zip(paths, _values(model.variables), _values(model0.variables)):
        assert_close_at_scale(a, b, rtol=rtol, atol=atol, err_msg=path)
    assert calls == 1


# ----------------------------------------------------- the stateless loop --

def _rnn_model():
    """A SimpleRNN with activation="silu" (Keras runs it under lax.scan) and a Dense head."""
    keras.utils.set_random_seed(1)
    return keras.Sequential([keras.Input((5, 4)), keras.layers.SimpleRNN(8, activation="silu"),
                             keras.layers.Dense(2)])


def _stateless_training(model, routed, steps=3):
    """docs/dropin.md's stateless loop: jax.value_and_grad of a (routed) function
    calling model.stateless_call, the optimizer applied statelessly."""
    optimizer = keras.optimizers.SGD(0.1)
    optimizer.build(model.trainable_variables)
    loss_fn = keras.losses.MeanSquaredError()

    def compute_loss(trainable, non_trainable, x, y):
        y_pred, non_trainable = model.stateless_call(trainable, non_trainable, x, training=True)
        return loss_fn(y, y_pred), non_trainable

    grad_fn = jax.value_and_grad(jas.route(compute_loss) if routed else compute_loss, has_aux=True)

    @jax.jit
    def train_step(state, x, y):
        trainable, non_trainable, opt_vars = state
        (loss, non_trainable), grads = grad_fn(trainable, non_trainable, x, y)
        trainable, opt_vars = optimizer.stateless_apply(opt_vars, grads, trainable)
        return loss, (trainable, non_trainable, opt_vars)

    return train_step, tuple(_values(v) for v in (model.trainable_variables, model.non_trainable_variables,
                                                  optimizer.variables))


def test_stateless_loop_trains_an_rnn_with_silu_as_unrouted():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 5, 4)).astype("float32")
    y = rng.standard_normal((6, 2)).astype("float32")
    runs = []
    for routed in (True, False):
        step, state = _stateless_training(_rnn_model(), routed)
        calls = custom_calls(step, state, x, y)
        losses = []
        for _ in range(3):
            loss, state = step(state, x, y)
            losses.append(float(loss))
        runs.append((losses, state[0], calls))
    (losses, weights, calls), (losses0, weights0, calls0) = runs
    np.testing.assert_allclose(losses, losses0, rtol=1e-5)
    assert losses[-1] < losses[0]
    assert_trees_close(weights, weights0, 1e-5, 1e-6)
    # One SiLU per time step, all inside the scan's loop: one call in the program.
    assert (calls, calls0) == (1, 0)


def test_keras_silu_spellings_reach_the_kernel():
    x = jnp.linspace(-4.0, 4.0, 9, dtype=jnp.float32)
    for act in (keras.activations.silu, keras.ops.silu, keras.activations.get("swish")):
        loss = lambda v, act=act: jnp.sum(act(v) ** 2)  # noqa: E731
        np.testing.assert_allclose(jax.grad(jas.route(loss))(x), jax.grad(loss)(x), rtol=2e-6, atol=1e-7)
        assert custom_calls(jax.grad(jas.route(loss)), x) == 1


# ------------------------------------------------------------------ keras-hub --
# keras-hub's Llama-family decoders write their SwiGLU feed-forward as gate_dense(x) cast to
# float32, keras.activations.silu, cast back to the compute dtype, then ops.multiply(up, gate):
# route fuses it, one SwiGluGrad call per decoder layer and no SiluGrad call left.
# Qwen3Backbone came after keras-hub 0.19.0 (the [keras-hub] extra, its last release without
# TensorFlow): its test skips there, saying so.
BACKBONES = {"llama": ("LlamaBackbone", {}), "mistral": ("MistralBackbone", {"sliding_window": 4}),
             "qwen3": ("Qwen3Backbone", {"head_dim": 8})}
LAYERS = 2


def _backbone(name):
    keras_hub = pytest.importorskip("keras_hub", reason="keras-hub not installed (extra [keras-hub])")
    cls_name, extra = BACKBONES[name]
    if not hasattr(keras_hub.models, cls_name):
        pytest.skip(f"keras-hub {keras_hub.__version__} has no {cls_name}")
    keras.utils.set_random_seed(3)
    return getattr(keras_hub.models, cls_name)(vocabulary_size=64, num_layers=LAYERS, num_query_heads=2,
                                               num_key_value_heads=1, hidden_dim=16, intermediate_dim=32, **extra)


def _tokens():
    tokens = np.random.default_rng(4).integers(0, 64, (2, 6)).astype("int32")
    return {"token_ids": tokens, "padding_mask": np.ones_like(tokens)}


def _backbone_loss(backbone):
    """MSE of the backbone's output against a fixed target, through stateless_call."""
    non_trainable = _values(backbone.non_trainable_variables)
    target = np.random.default_rng(5).standard_normal((2, 6, 16)).astype("float32")

    def loss(trainable, inputs):
        out, _ = backbone.stateless_call(trainable, non_trainable, inputs)
        return jnp.mean((out.astype(jnp.float32) - target) ** 2)

    return loss


@pytest.mark.keras_hub
@pytest.mark.parametrize("name", list(BACKBONES))
def test_keras_hub_backbone_one_swiglu_call_per_decoder_layer(name):
    """A tiny backbone with random weights, built here (nothing downloaded)."""
    backbone = _backbone(name)
    inputs, trainable = _tokens(), _values(backbone.trainable_variables)
    loss = _backbone_loss(backbone)
    assert jas.route_report(loss)(trainable, inputs) == jas.RouteReport(swiglu=LAYERS)
    routed, plain = (jax.jit(jax.grad(f)).lower(trainable, inputs).compile() for f in (jas.route(loss), loss))
    assert_trees_close(routed(trainable, inputs), plain(trainable, inputs), 1e-4, 1e-6)
    text = routed.as_text()
    assert (text.count(HLO_SWIGLU_CALL), text.count(HLO_CALL)) == (LAYERS, 0)
    assert HLO_SWIGLU_CALL not in plain.as_text()


@pytest.mark.keras_hub
@pytest.mark.combinatorial(cases=4)  # every backbone and policy in the default run's sample
@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
@pytest.mark.parametrize("name", list(BACKBONES))
def test_keras_hub_backbone_trains_as_unrouted(name, policy):
    """Loss curves over 5 SGD steps, routed and unrouted, from the same weights."""
    keras.mixed_precision.set_global_policy(policy)
    try:
        backbone = _backbone(name)
        inputs, loss = _tokens(), _backbone_loss(backbone)
        assert jas.route_report(loss)(_values(backbone.trainable_variables), inputs).swiglu == LAYERS
        curves = []
        for f in (jas.route(loss), loss):
            step = jax.jit(lambda w, f=f: (lambda v, g: (v, [p - 0.5 * d for p, d in zip(w, g)]))(
                *jax.value_and_grad(f)(w, inputs)))
            weights, curve = _values(backbone.trainable_variables), []
            for _ in range(5):
                value, weights = step(weights)
                curve.append(float(value))
            curves.append(curve)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    routed, plain = curves
    assert routed[-1] < routed[0]
    # mixed_bfloat16: the fused SwiGLU rounds its product once where the layer rounds twice in bfloat16.
    np.testing.assert_allclose(routed, plain, rtol=1e-5 if policy == "float32" else 1e-2)
