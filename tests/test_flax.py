"""Flax models on the SiluGrad kernel: jas.silu as an activation, and route()
on unmodified linen and nnx models, whose in-place state (Dropout RNG streams,
BatchNorm statistics, custom Variables, nnx.Rngs) it keeps as the unrouted
function does. Flax is optional: skipped when absent (extra [flax])."""

import importlib.util
import io
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

flax = pytest.importorskip("flax")
from flax import linen, nnx  # noqa: E402

import jax_ascend_silu as jas  # noqa: E402
from checks import assert_trees_close, custom_calls  # noqa: E402

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "flax_activation.py"


# --- third-party style models: written against Flax alone -------------------------


class LinenMLP(linen.Module):
    @linen.compact
    def __call__(self, x):
        x = linen.silu(linen.Dense(16)(x))
        x = linen.swish(linen.Dense(16)(x))
        return linen.Dense(3)(x)


class LinenRematStack(linen.Module):
    """Lifted transforms: a rematerialised block applied by linen.scan."""

    @linen.compact
    def __call__(self, x):
        class Block(linen.Module):
            @linen.compact
            def __call__(self, carry, _):
                return carry + linen.silu(linen.Dense(carry.shape[-1])(carry)), None

        stack = linen.scan(linen.remat(Block), variable_axes={"params": 0}, split_rngs={"params": True}, length=3)
        x, _ = stack()(linen.Dense(8)(x), None)
        return linen.Dense(3)(x)


class NnxMLP(nnx.Module):
    def __init__(self, rngs):
        self.a = nnx.Linear(6, 16, rngs=rngs)
        self.b = nnx.Linear(16, 3, rngs=rngs)

    def __call__(self, x):
        return self.b(nnx.silu(self.a(x)))


def _data():
    kx, ky = jax.random.split(jax.random.PRNGKey(7))
    return jax.random.normal(kx, (5, 6)) * 2.0, jax.random.normal(ky, (5, 3))


@pytest.mark.parametrize("module, sites", [(LinenMLP, 2), (LinenRematStack, 1)], ids=["mlp", "scan-remat"])
def test_unmodified_linen_model_through_route(module, sites):
    x, y = _data()
    model = module()
    variables = model.init(jax.random.PRNGKey(0), x)

    def loss(apply):
        return lambda v: jnp.mean((apply(v, x) - y) ** 2)

    routed, original = loss(jas.route(model.apply)), loss(model.apply)
    np.testing.assert_allclose(routed(variables), original(variables), rtol=1e-6)
    assert_trees_close(jax.jit(jax.grad(routed))(variables), jax.grad(original)(variables))
    assert custom_calls(jax.grad(routed), variables) == sites
    assert custom_calls(jax.grad(original), variables) == 0


def test_unmodified_nnx_model_through_route():
    x, y = _data()
    model = NnxMLP(nnx.Rngs(0))

    def loss(model, x, y):
        return jnp.mean((model(x) - y) ** 2)

    # Functional style: parameters as a pytree.
    graphdef, params = nnx.split(model, nnx.Param)
    of_params = lambda f: lambda p: f(nnx.merge(graphdef, p), x, y)  # noqa: E731
    assert_trees_close(jax.grad(of_params(jas.route(loss)))(params), jax.grad(of_params(loss))(params))
    assert custom_calls(jax.grad(of_params(jas.route(loss))), params) == 1
    assert custom_calls(jax.grad(of_params(loss)), params) == 0
    # nnx's own transforms, with the module itself as the argument.
    grads = nnx.jit(nnx.grad(jas.route(loss)))(model, x, y)
    assert_trees_close(nnx.state(grads, nnx.Param), nnx.state(nnx.grad(loss)(model, x, y), nnx.Param))


def test_jas_silu_as_nnx_activation():
    example = _load_example()
    x, y = _data()
    ours = example.MLP((6, 16, 16, 3), activation=jas.silu, rngs=nnx.Rngs(0))
    plain = example.MLP((6, 16, 16, 3), activation=nnx.silu, rngs=nnx.Rngs(0))
    g_ours = nnx.grad(example.mse)(ours, x, y)
    g_plain = nnx.grad(example.mse)(plain, x, y)
    assert_trees_close(nnx.state(g_ours, nnx.Param), nnx.state(g_plain, nnx.Param))
    graphdef, params = nnx.split(ours, nnx.Param)
    assert custom_calls(jax.grad(lambda p: example.mse(nnx.merge(graphdef, p), x, y)), params) == 2


def test_flax_example_runs():
    out = io.StringIO()
    assert _load_example().main(steps=5, out=out) == 0
    text = out.getvalue()
    assert "2 SiluGrad custom calls" in text and "1 SiluGrad custom call (unrouted: 0)" in text
    assert text.rstrip().endswith("OK")


def _load_example():
    spec = importlib.util.spec_from_file_location("flax_activation", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- NNX state: what the module changes in place during the call ------------------
#
# Each model below changes non-parameter state when called: Dropout advances its RNG
# stream, BatchNorm its running statistics, a custom layer its own nnx.Variable, and
# an nnx.Rngs passed on its own advances too. route must leave every one of them as
# the unrouted function does, step for step.


class Tally(nnx.Module):
    """A custom layer keeping its own state: how often it ran and a running mean."""

    def __init__(self):
        self.calls = nnx.Variable(jnp.zeros((), jnp.int32))
        self.mean = nnx.Variable(jnp.zeros(()))

    def __call__(self, x):
        self.calls[...] += 1
        self.mean[...] = 0.5 * self.mean[...] + 0.5 * jnp.mean(x)
        return x


def _dropout_model(seed):
    rngs = nnx.Rngs(seed, dropout=seed + 1)
    return nnx.Sequential(nnx.Linear(4, 16, rngs=rngs), nnx.silu, nnx.Dropout(0.5, rngs=rngs),
                          nnx.Linear(16, 2, rngs=rngs))


def _batch_norm_model(seed):
    rngs = nnx.Rngs(seed)
    return nnx.Sequential(nnx.Linear(4, 16, rngs=rngs), nnx.BatchNorm(16, rngs=rngs), nnx.silu,
                          nnx.Linear(16, 2, rngs=rngs))


def _tally_model(seed):
    rngs = nnx.Rngs(seed)
    return nnx.Sequential(nnx.Linear(4, 16, rngs=rngs), nnx.silu, Tally(), nnx.Linear(16, 2, rngs=rngs))


class _Everything(nnx.Module):
    """Dropout with its own stream, BatchNorm, a custom Variable, and a Dropout that
    draws from an nnx.Rngs passed with the call."""

    def __init__(self, seed):
        rngs = nnx.Rngs(seed, dropout=seed + 1)
        self.a = nnx.Linear(4, 16, rngs=rngs)
        self.bn = nnx.BatchNorm(16, rngs=rngs)
        self.drop = nnx.Dropout(0.25, rngs=rngs)
        self.tally = Tally()
        self.late_drop = nnx.Dropout(0.25)
        self.b = nnx.Linear(16, 2, rngs=rngs)

    def __call__(self, x, rngs):
        h = self.tally(self.drop(nnx.silu(self.bn(self.a(x)))))
        return self.b(self.late_drop(nnx.silu(h), rngs=rngs))


class _Block(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(8, 8, rngs=rngs)
        self.bn = nnx.BatchNorm(8, rngs=rngs)
        self.drop = nnx.Dropout(0.25, rngs=rngs)

    def __call__(self, x):
        return x + self.drop(nnx.silu(self.bn(self.linear(x))))


class _ScanStack(nnx.Module):
    """Three blocks with stacked parameters, statistics and RNG streams (made by nnx.vmap),
    applied by nnx.scan; `body` wraps the scanned function (route, in one test)."""

    def __init__(self, seed, body=lambda f: f):
        @nnx.split_rngs(splits=3)
        @nnx.vmap(in_axes=(0,), out_axes=0)
        def make(rngs):
            return _Block(rngs)

        rngs = nnx.Rngs(seed, dropout=seed + 1)
        self.embed = nnx.Linear(4, 8, rngs=rngs)
        self.blocks = make(rngs)
        self.head = nnx.Linear(8, 2, rngs=rngs)
        self.scan = nnx.scan(body(lambda x, block: block(x)), in_axes=(nnx.Carry, 0), out_axes=nnx.Carry)

    def __call__(self, x):
        return self.head(self.scan(self.embed(x), self.blocks))


NNX_MODELS = {
    "dropout": _dropout_model,
    "batch-stats": _batch_norm_model,
    "custom-variable": _tally_model,
    "everything": _Everything,
    "scan-stack": _ScanStack,
}


def _nnx_loss(inputs, batch):
    """A loss taking graph nodes inside a pytree: {"model": ..., "rngs": ...} (rngs optional)."""
    x, y = batch
    model = inputs["model"]
    out = model(x, inputs["rngs"]) if "rngs" in inputs else model(x)
    return jnp.mean((out - y) ** 2)


def _nnx_problem(model_name, seed=0, **options):
    inputs = {"model": NNX_MODELS[model_name](seed, **options)}
    if model_name == "everything":
        inputs["rngs"] = nnx.Rngs(seed + 7)
    kx, ky = jax.random.split(jax.random.PRNGKey(seed + 3))
    return inputs, (jax.random.normal(kx, (8, 4)), jax.random.normal(ky, (8, 2)))


def _step_fns(loss):
    """Training steps (SGD on nnx.Param) in each way NNX users write them; each returns the loss.
    SGD, not Adam: Adam's first step moves every parameter by its learning rate times the sign
    of its gradient, and the bias before BatchNorm has a gradient of zero up to rounding, whose
    sign differs between any two backward passes."""
    import optax

    def value_and_grad(inputs, opt, batch):
        value, grads = nnx.value_and_grad(loss)(inputs, batch)
        opt.update(inputs["model"], grads["model"])
        return value

    def grad_only(inputs, opt, batch):
        grads = nnx.grad(loss)(inputs, batch)
        opt.update(inputs["model"], grads["model"])
        return loss(inputs, batch)  # a second call: state moves twice per step, routed or not

    def call_only(inputs, opt, batch):
        return loss(inputs, batch)

    return optax.sgd(0.1), {
        "jit-value_and_grad": nnx.jit(value_and_grad),
        "jit-grad": nnx.jit(grad_only),
        "eager-call": call_only,
    }


def _train_nnx(model_name, loss, mode, steps=4, **options):
    inputs, batch = _nnx_problem(model_name, **options)
    tx, steps_by_mode = _step_fns(loss)
    opt = nnx.Optimizer(inputs["model"], tx, wrt=nnx.Param)
    losses = [float(steps_by_mode[mode](inputs, opt, batch)) for _ in range(steps)]
    return losses, inputs


def _non_params(inputs):
    """The non-parameter state as plain arrays (typed RNG keys as their key data)."""
    leaves = jax.tree.leaves(nnx.state(inputs, nnx.Not(nnx.Param)))
    return [np.asarray(jax.random.key_data(a) if jnp.issubdtype(a.dtype, jax.dtypes.prng_key) else a) for a in leaves]


def _assert_same_nnx_state(routed, unrouted, model_name, mode):
    """Non-parameter state (RNG counts and keys, batch statistics, custom Variables)
    as unrouted; parameters within float32 rounding of the two backward passes."""
    ours, theirs = _non_params(routed), _non_params(unrouted)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # The state moved from its initial values: the comparison tells kept state from dropped state.
    initial = _non_params(_nnx_problem(model_name)[0])
    assert any(not np.array_equal(a, b) for a, b in zip(ours, initial))
    if mode != "eager-call":
        assert_trees_close(nnx.state(routed, nnx.Param), nnx.state(unrouted, nnx.Param), 1e-4, 1e-6)


@pytest.mark.parametrize("model_name", ["dropout", "batch-stats", "custom-variable"])
def test_nnx_state_changes_survive_route(model_name):
    """Over 4 SGD steps under nnx.jit(nnx.value_and_grad), routed and unrouted losses agree
    step for step, and so does the final non-parameter state."""
    mode = "jit-value_and_grad"
    losses, routed = _train_nnx(model_name, jas.route(_nnx_loss), mode)
    losses0, unrouted = _train_nnx(model_name, _nnx_loss, mode)
    np.testing.assert_allclose(losses, losses0, rtol=1e-5)
    _assert_same_nnx_state(routed, unrouted, model_name, mode)


@pytest.mark.parametrize("mode", ["jit-value_and_grad", "jit-grad", "eager-call"])
def test_nnx_state_of_every_kind_survives_route(mode):
    """All of the above and an nnx.Rngs of its own, under nnx.value_and_grad, under nnx.grad
    with a second call in the step, and in eager calls."""
    losses, routed = _train_nnx("everything", jas.route(_nnx_loss), mode)
    losses0, unrouted = _train_nnx("everything", _nnx_loss, mode)
    np.testing.assert_allclose(losses, losses0, rtol=1e-5)
    _assert_same_nnx_state(routed, unrouted, "everything", mode)


def test_nnx_scan_over_layers_keeps_the_stacked_state():
    """Stacked blocks (nnx.vmap) run by nnx.scan, with route both on the loss and inside
    the scanned function, where it receives each layer's module from nnx.scan."""
    mode = "jit-value_and_grad"
    losses, routed = _train_nnx("scan-stack", jas.route(_nnx_loss), mode, body=jas.route)
    losses0, unrouted = _train_nnx("scan-stack", _nnx_loss, mode)
    np.testing.assert_allclose(losses, losses0, rtol=1e-5)
    _assert_same_nnx_state(routed, unrouted, "scan-stack", mode)



def test_route_inside_nnx_vmap_keeps_each_layers_state():
    """route receiving one layer of a stacked module from nnx.vmap (in training mode)."""
    initial = _ScanStack(0).blocks

    def run(wrap):
        blocks = nnx.clone(initial)

        @nnx.jit
        @nnx.vmap(in_axes=(0, None))
        def each(block, x):
            return wrap(lambda block, x: block(x))(block, x)

        return each(blocks, jnp.linspace(-2.0, 2.0, 32).reshape(4, 8)), _non_params(blocks)

    (out, state), (out0, state0) = run(jas.route), run(lambda f: f)
    np.testing.assert_array_equal(out, out0)
    assert len(state) == len(state0) and all(np.array_equal(a, b) for a, b in zip(state, state0))
    assert not all(np.array_equal(a, b) for a, b in zip(state, _non_params(initial)))


def test_graph_nodes_passed_alone_returned_or_grown_stay_the_objects_passed():
    """Eagerly: an nnx.Rngs as its own argument advances; a module f returns is the one
    passed; a Variable f adds to a module is there afterwards; a module f creates comes
    back with concrete values, as without route."""

    def f(model, x, rngs):
        model.seen = nnx.Variable(jnp.sum(x))  # an attribute added during the call
        return model(x, rngs=rngs).sum(), model

    runs = []
    for fn in (f, jas.route(f)):
        model, rngs = nnx.Dropout(0.5), nnx.Rngs(dropout=3)
        value, returned = fn(model, jnp.arange(6.0), rngs)
        assert returned is model
        runs.append((float(value), int(rngs.dropout.count[...]), float(model.seen[...])))
    assert runs[0] == runs[1] and runs[0][1] == 1 and runs[0][2] == 15.0

    def make(x):  # a module created inside and returned
        layer = nnx.Linear(3, 2, rngs=nnx.Rngs(0))
        return layer(x).sum(), layer

    (value, layer), (value0, layer0) = jas.route(make)(jnp.ones(3)), make(jnp.ones(3))
    assert float(value) == float(value0) and isinstance(layer, nnx.Linear)
    np.testing.assert_array_equal(layer.kernel[...], layer0.kernel[...])


def test_module_changed_while_closed_over_is_refused_with_what_to_do():
    model = _dropout_model(0)
    x = jnp.ones((2, 4))
    with pytest.raises(RuntimeError, match=r"route\(.*<lambda>\): the routed function changes a Flax NNX object "
                       r"that it does not take as an argument .*RngCount.*pass the module to the routed function"):
        jas.route(lambda x: model(x).sum())(x)
    # Read only, a closed-over module is fine.
    model.eval()
    np.testing.assert_array_equal(jas.route(lambda x: model(x).sum())(x), model(x).sum())


# --- NNX's functional API inside the routed function ----------------------------------
#
# nnx.split outside, nnx.merge inside the loss: the module the loss builds is its own, and
# the state passed in as a non-differentiated argument of jax.value_and_grad stays at the
# caller's trace level, where NNX refuses any write from inside the transform. Unrouted,
# the loss only reads that state, so route must leave it unwritten too.


class _DropoutMLP(nnx.Module):
    def __init__(self, seed):
        rngs = nnx.Rngs(seed, dropout=seed + 1)
        self.a = nnx.Linear(4, 16, rngs=rngs)
        self.drop = nnx.Dropout(0.5, rngs=rngs)
        self.b = nnx.Linear(16, 2, rngs=rngs)

    def __call__(self, x):
        return self.b(self.drop(nnx.silu(self.a(x))))


FUNCTIONAL_MODELS = {"sequential": _dropout_model, "module": _DropoutMLP}


def _functional_loss(graphdef, copy):
    def loss(params, rest, x, y):
        model = nnx.merge(graphdef, params, rest, copy=copy)
        return jnp.mean((model(x) - y) ** 2), nnx.state(model, nnx.Not(nnx.Param))

    return loss


def _rng_counts(state):
    return [int(count) for count in jax.tree.leaves(nnx.filter_state(state, nnx.RngCount))]


def _assert_same_arrays(actual, expected):
    actual, expected = _non_params(actual), _non_params(expected)
    assert len(actual) == len(expected) and all(np.array_equal(a, b) for a, b in zip(actual, expected))


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("model_name", list(FUNCTIONAL_MODELS))
def test_nnx_functional_api_under_route_has_no_trace_context_error(model_name, jit):
    """jax.value_and_grad(route(loss), has_aux=True)(params, rest, x, y) with nnx.merge(..., copy=True)
    in the loss: gradients and the returned state (the Dropout's RNG count advanced) as unrouted,
    the caller's state untouched, and the gradient through SiluGrad."""
    graphdef, params, rest = nnx.split(FUNCTIONAL_MODELS[model_name](0), nnx.Param, ...)
    passed = nnx.clone(rest)
    x, y = _nnx_problem("dropout")[1]
    loss = _functional_loss(graphdef, copy=True)

    def value_and_grad(f):
        step = jax.value_and_grad(f, has_aux=True)
        return jax.jit(step) if jit else step

    (value, state), grads = value_and_grad(jas.route(loss))(params, rest, x, y)
    (value0, state0), grads0 = value_and_grad(loss)(params, rest, x, y)
    np.testing.assert_allclose(value, value0, rtol=1e-6)
    assert_trees_close(grads, grads0)
    _assert_same_arrays(state, state0)
    assert _rng_counts(state) == _rng_counts(state0) != _rng_counts(passed)
    _assert_same_arrays(rest, passed)
    assert custom_calls(value_and_grad(jas.route(loss)), params, rest, x, y) == 1
    assert custom_calls(value_and_grad(loss), params, rest, x, y) == 0


@pytest.mark.parametrize("mode", ["eval-value_and_grad", "train-eager", "train-jit"])
def test_nnx_merge_without_copy_under_route(mode):
    """nnx.merge without copy: the loss's module holds the caller's Variables. In eval mode it only
    reads them, which works under jax.value_and_grad; in training mode its Dropout advances the
    caller's RNG count, which works eagerly (the caller's state changes in place) and under jax.jit
    (the returned state changes). Routed, each ends as unrouted."""
    x, y = _nnx_problem("dropout")[1]

    def run(wrap):
        model = _DropoutMLP(0)
        if mode.startswith("eval"):
            model.eval()
        graphdef, params, rest = nnx.split(model, nnx.Param, ...)
        passed = nnx.clone(rest)
        loss = wrap(_functional_loss(graphdef, copy=False))
        if mode == "eval-value_and_grad":
            (value, state), grads = jax.value_and_grad(loss, has_aux=True)(params, rest, x, y)
        else:
            value, state = (jax.jit(loss) if mode == "train-jit" else loss)(params, rest, x, y)
            grads = params
        return value, state, grads, rest, passed

    value, state, grads, rest, passed = run(jas.route)
    value0, state0, grads0, rest0, _ = run(lambda f: f)
    np.testing.assert_allclose(value, value0, rtol=1e-6)
    assert_trees_close(grads, grads0)
    _assert_same_arrays(state, state0)
    _assert_same_arrays(rest, rest0)
    moved = _rng_counts(state) != _rng_counts(passed)
    assert moved == mode.startswith("train")
    assert (_rng_counts(rest) != _rng_counts(passed)) == (mode == "train-eager")


def test_unchanged_nnx_argument_under_grad_has_no_trace_context_error():
    """A module passed to jax.grad's function as a non-differentiated argument, read and returned
    unchanged: gradients as unrouted, through SiluGrad, and returned eagerly as the very object passed."""
    model = _DropoutMLP(0)
    model.eval()
    x = _nnx_problem("dropout")[1][0]

    def f(x, model):
        return jnp.mean(model(x) ** 2), model

    grad, returned = jax.grad(jas.route(f), has_aux=True)(x, model)
    grad0, _ = jax.grad(f, has_aux=True)(x, model)
    assert_trees_close(grad, grad0)
    assert isinstance(returned, _DropoutMLP)
    assert jas.route(f)(x, model)[1] is model
    assert custom_calls(jax.grad(jas.route(f), has_aux=True), x, model) == 1
    assert custom_calls(jax.grad(f, has_aux=True), x, model) == 0
