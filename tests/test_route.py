"""route(f): unmodified models get their SiLU backward from the custom call,
with the values and gradients of the original."""

import functools
import subprocess
import sys
import warnings

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax.extend.core import jaxprs_in_params

import jax_ascend_silu as jas
import reference
import untouched_models as um
from checks import assert_trees_close, custom_calls


def silu_sites(jaxpr) -> int:
    """jax.nn.silu calls in a jaxpr, outside custom-derivative functions."""
    count = 0
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name in ("jit", "pjit") and eqn.params["name"] == "silu":
            count += 1
        elif not name.startswith(("custom_vjp", "custom_jvp")):
            count += sum(silu_sites(sub) for sub in jaxprs_in_params(eqn.params))
    return count


def _problem(model, seed=0):
    init, loss, sites = um.MODELS[model]
    k_params, k_batch = jax.random.split(jax.random.PRNGKey(seed))
    return init(k_params), um.batch(k_batch), loss, sites


# (value rtol, gradient rtol, gradient atol). Gradients differ from JAX
# autodiff's by float32 rounding; in mixed-precision by bfloat16 rounding, and
# XLA may fuse its bfloat16 layer differently (keeping float32 intermediates).
TOL = {"mixed-precision": (1e-2, 2e-2, 2e-3)}
DEFAULT_TOL = (1e-6, 2e-5, 2e-6)


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("model", list(um.MODELS))
def test_values_and_gradients_match_the_original(model, mode):
    params, batch, loss, _ = _problem(model)
    wrap = jax.jit if mode == "jit" else (lambda f: f)
    value, grads = wrap(jax.value_and_grad(jas.route(loss)))(params, batch)
    value0, grads0 = jax.value_and_grad(loss)(params, batch)
    value_rtol, rtol, atol = TOL.get(model, DEFAULT_TOL)
    np.testing.assert_allclose(value, value0, rtol=value_rtol)
    assert_trees_close(grads, grads0, rtol, atol)


@pytest.mark.parametrize("model", list(um.MODELS))
def test_gradient_program_runs_one_custom_call_per_silu(model):
    params, batch, loss, sites = _problem(model)
    assert custom_calls(jax.grad(jas.route(loss)), params, batch) == sites
    assert custom_calls(jax.grad(loss), params, batch) == 0


@pytest.mark.parametrize("model", list(um.MODELS))
def test_every_silu_call_is_replaced(model):
    params, batch, loss, sites = _problem(model)
    assert silu_sites(jax.make_jaxpr(loss)(params, batch).jaxpr) == sites
    assert silu_sites(jax.make_jaxpr(jas.route(loss))(params, batch).jaxpr) == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(), (7,), (3, 1, 5)], ids=lambda s: f"shape{list(s)}".replace(" ", ""))
def test_routed_silu_gradient_matches_float64_reference(dtype, shape):
    x = (np.random.default_rng(2).standard_normal(shape) * 4).astype(dtype)
    grad = jax.grad(jas.route(lambda v: jax.nn.silu(v).astype(jnp.float32).sum()))(jnp.asarray(x))
    assert grad.dtype == np.dtype(dtype) and grad.shape == shape
    err = reference.ulp_error(np.asarray(grad), reference.silu_grad(np.ones(shape), x), dtype)
    assert err.max() <= reference.MAX_ULP[np.dtype(dtype)]


def test_pytrees_kwargs_and_aux_outputs_keep_their_structure():
    params, batch, _, _ = _problem("mlp-silu")

    def loss_with_aux(params, batch, *, scale):
        x, _ = batch
        h = jax.nn.silu(x @ params[0]["w"])
        return scale * jnp.mean(h), {"hidden": h, "sizes": (h.shape[0], None)}

    routed = jax.value_and_grad(jas.route(loss_with_aux), has_aux=True)
    (value, aux), grads = routed(params, batch, scale=2.0)
    (value0, aux0), grads0 = jax.value_and_grad(loss_with_aux, has_aux=True)(params, batch, scale=2.0)
    size, nothing = aux["sizes"]
    assert int(size) == 5 and nothing is None  # as under jax.jit: numbers come back as arrays
    np.testing.assert_allclose(value, value0, rtol=1e-6)
    assert_trees_close(aux["hidden"], aux0["hidden"], 1e-6, 0)
    assert_trees_close(grads, grads0, 2e-5, 2e-6)


def test_static_arguments_under_jit():
    params, batch, _, _ = _problem("mlp-silu")

    def loss(params, batch, depth, activation):
        x, _ = batch
        for layer in params[:depth]:
            x = activation(x @ layer["w"] + layer["b"])
        return jnp.mean(x**2)

    routed = jax.jit(jax.grad(jas.route(loss)), static_argnums=(2, 3))
    for depth in (1, 2):
        for act in (jax.nn.silu, jax.nn.swish):
            assert_trees_close(routed(params, batch, depth, act), jax.grad(loss)(params, batch, depth, act), 2e-5, 2e-6)
        fixed = functools.partial(loss, depth=depth, activation=jax.nn.silu)
        assert custom_calls(jax.grad(jas.route(fixed)), params, batch) == depth
    # Eagerly, a Python int drives Python control flow inside f, as it does without route.
    assert_trees_close(jax.grad(jas.route(loss))(params, batch, 2, jax.nn.silu),
                       jax.grad(loss)(params, batch, 2, jax.nn.silu), 2e-5, 2e-6)


def test_vmap_of_routed_function_and_per_example_gradients():
    params, (x, y), loss, _ = _problem("mlp-silu")
    xs, ys = x[:, None, :], y[:, None, :]  # five examples of batch size 1
    per_example = jax.vmap(jax.grad(jas.route(loss)), in_axes=(None, 0))
    expected = jax.vmap(jax.grad(loss), in_axes=(None, 0))(params, (xs, ys))
    assert_trees_close(jax.jit(per_example)(params, (xs, ys)), expected, 2e-5, 2e-6)
    values = jax.vmap(jas.route(loss), in_axes=(None, 0))(params, (xs, ys))
    np.testing.assert_allclose(values, jax.vmap(loss, in_axes=(None, 0))(params, (xs, ys)), rtol=1e-6)


def test_float64_silu_is_left_alone_with_x64():
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        def loss(x64, x32):
            return jnp.sum(jax.nn.silu(x64)) + jnp.sum(jax.nn.silu(x32)).astype(jnp.float64)

        x64 = jnp.linspace(-3, 3, 7, dtype=jnp.float64)
        x32 = jnp.linspace(-3, 3, 7, dtype=jnp.float32)
        g64, g32 = jax.grad(jas.route(loss), argnums=(0, 1))(x64, x32)
        e64, e32 = jax.grad(loss, argnums=(0, 1))(x64, x32)
        np.testing.assert_array_equal(g64, e64)  # JAX's own derivative, untouched
        assert g64.dtype == jnp.float64
        np.testing.assert_allclose(g32, e32, rtol=2e-6, atol=1e-7)
        assert custom_calls(jax.grad(jas.route(loss), argnums=(0, 1)), x64, x32) == 1  # float32 only
    finally:
        jax.config.update("jax_enable_x64", previous)


def test_functions_that_only_share_the_name_are_not_replaced():
    @jax.jit
    def silu(x):  # a GELU approximation that happens to be called silu
        return x * jax.nn.sigmoid(1.702 * x)

    x = jnp.linspace(-3, 3, 9)
    f = lambda v: jnp.sum(silu(v))  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(jax.grad(jas.route(f))(x), jax.grad(f)(x))
    assert custom_calls(jax.grad(jas.route(f)), x) == 0


def test_custom_derivative_rules_inside_f_stay_in_charge():
    @jax.custom_jvp
    def act(x):
        return jax.nn.silu(x)

    act.defjvp(lambda primals, tangents: (act(primals[0]), 2.0 * tangents[0]))
    x = jnp.linspace(-3, 3, 9)
    f = lambda v: jnp.sum(act(v))  # noqa: E731
    np.testing.assert_array_equal(jax.grad(jas.route(f))(x), jnp.full(9, 2.0))


def test_route_of_route_changes_nothing_more():
    params, batch, loss, sites = _problem("nested-jit")
    twice = jas.route(jas.route(loss))
    assert custom_calls(jax.grad(twice), params, batch) == sites
    assert_trees_close(jax.grad(twice)(params, batch), jax.grad(jas.route(loss))(params, batch), 0, 0)


def test_warns_when_f_differentiates_silu_itself():
    params, batch, loss, sites = _problem("mlp-silu")
    routed = jas.route(jax.grad(loss))
    with pytest.warns(UserWarning, match=rf"\): {sites} differentiated jax.nn.silu call\(s\).*Apply route to the function being differentiated"):
        grads = routed(params, batch)
        calls = custom_calls(routed, params, batch)
    # Left unrouted: no SiluGrad call, and jax.grad's values. route evaluates
    # f's own jaxpr, a differently traced program that XLA may fuse and round
    # differently, so equal to a few float32 ulp of each leaf's scale, not bit
    # for bit (route promises f's values, not its bits).
    assert calls == 0
    expected = jax.grad(loss)(params, batch)
    for leaf, want in zip(jax.tree.leaves(grads), jax.tree.leaves(expected)):
        scale = float(np.abs(want).max())
        assert_trees_close(leaf, want, rtol=0, atol=4 * np.finfo(np.float32).eps * scale)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jax.grad(jas.route(loss))(params, batch)


@pytest.mark.parametrize(
    "make, count",
    [
        (lambda f: jax.grad(f), 1),
        (lambda f: lambda x: jax.jvp(f, (x,), (x,)), 1),
        (lambda f: lambda x: jax.vjp(f, x)[1](1.0), 1),
        (lambda f: lambda x: jax.linearize(f, x)[1](x), 1),
        (lambda f: jax.grad(lambda x: f(x) + f(2 * x)), 2),
    ],
    ids=["grad", "jvp", "vjp", "linearize", "grad-two-calls"],
)
def test_warning_counts_each_differentiated_silu_once(make, count):
    def f(x):
        return jnp.sum(jax.nn.silu(x))

    with pytest.warns(UserWarning, match=rf": {count} differentiated jax.nn.silu call\(s\)"):
        jas.route(make(f))(jnp.linspace(-2.0, 2.0, 5))


@pytest.mark.parametrize("bad", [3, None, "silu", [jax.nn.silu]])
def test_route_of_a_non_function_fails_at_once(bad):
    with pytest.raises(TypeError, match=r"^route: expected the function to route, got "):
        jas.route(bad)


def test_route_keeps_the_function_name_and_doc():
    routed = jas.route(um.mlp_silu_loss)
    assert routed.__name__ == "mlp_silu_loss" and routed.__doc__ == um.mlp_silu_loss.__doc__


def test_training_loop_with_routed_loss_follows_the_original():
    params, batch, loss, _ = _problem("scan", seed=4)

    def train(loss_fn):
        def step(p, _):
            value, g = jax.value_and_grad(loss_fn)(p, batch)
            return jax.tree.map(lambda a, b: a - 0.1 * b, p, g), value

        return jax.jit(lambda p: jax.lax.scan(step, p, None, length=30))

    trained, losses = train(jas.route(loss))(params)
    trained0, losses0 = train(loss)(params)
    assert float(losses[-1]) < 0.8 * float(losses[0])
    np.testing.assert_allclose(losses, losses0, rtol=1e-4)
    assert_trees_close(trained, trained0, 1e-4, 1e-5)
    assert custom_calls(train(jas.route(loss)), params) == 1


def test_route_does_not_import_flax():
    """route looks for Flax NNX graph nodes only where flax.nnx is already imported."""
    program = (
        "import sys, jax, jax.numpy as jnp, jax_ascend_silu as jas\n"
        "g = jax.grad(jas.route(lambda p, x: jnp.sum(jax.nn.silu(p['w'] * x))))({'w': jnp.ones(3)}, jnp.ones(3))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('flax', 'keras', 'equinox', 'haiku')))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_constant_arrays_come_back_as_arrays():
    """A constant array f returns is a literal in the traced program; route returns it as
    the array f returned, and a Python number as that number."""
    flag, count, value = jas.route(lambda x: (jnp.array(False), 3, jnp.sum(x)))(jnp.ones(3))
    assert isinstance(flag, jax.Array) and flag.dtype == jnp.bool_ and not bool(flag)
    assert type(count) is int and count == 3 and float(value) == 3.0
