"""End to end: gradients of a SiLU MLP and a jitted training loop."""

import re

import jax
import numpy as np
import pytest

from checks import assert_close_at_scale
from jax_ascend_silu import demo, silu

# Every test here runs on each platform present (conftest.py: CPU, and a CUDA GPU if any).
pytestmark = pytest.mark.usefixtures("platform")


def _problem(seed=0, hidden=32):
    k_data, k_init = jax.random.split(jax.random.PRNGKey(seed))
    x, y = demo.synthetic_data(k_data, n=128)
    params = demo.init_mlp(k_init, (x.shape[1], hidden, hidden, y.shape[1]))
    return params, x, y


def test_mlp_gradient_equals_jax_nn_silu_version():
    params, x, y = _problem()
    ours = jax.jit(jax.grad(demo.loss_fn), static_argnums=3)(params, x, y, silu)
    native = jax.grad(demo.loss_fn)(params, x, y, jax.nn.silu)
    for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(native)):
        assert_close_at_scale(a, b, rtol=2e-5, atol=2e-6)
    assert demo.max_grad_difference(params, x, y) < 1e-5


def test_jitted_training_loop_follows_native_loss_curve():
    params, x, y = _problem(seed=3)
    ours_params, ours = demo.make_train(silu, steps_per_call=100)(params, x, y)
    native_params, native = demo.make_train(jax.nn.silu, steps_per_call=100)(params, x, y)
    assert float(ours[-1]) < 0.5 * float(ours[0])  # it learns
    np.testing.assert_allclose(ours, native, rtol=1e-4)
    for a, b in zip(jax.tree.leaves(ours_params), jax.tree.leaves(native_params)):
        assert_close_at_scale(a, b, rtol=1e-3, atol=1e-5)


def test_fori_loop_training_uses_the_custom_call():
    params, x, y = _problem(seed=1)

    def body(_, p):
        g = jax.grad(demo.loss_fn)(p, x, y, silu)
        return jax.tree.map(lambda a, b: a - 0.05 * b, p, g)

    run = jax.jit(lambda p: jax.lax.fori_loop(0, 20, body, p))
    assert "jax_ascend_silu_silu_grad" in run.lower(params).as_text()
    trained = run(params)
    assert float(demo.loss_fn(trained, x, y)) < float(demo.loss_fn(params, x, y))


def test_demo_main_job_succeeds(capsys):
    assert demo.run(steps=100, hidden=16) == 0
    out = capsys.readouterr().out
    assert "loss" in out and "largest gradient difference" in out and "OK" in out


def _line(out: str, start: str) -> str:
    return next(line.strip() for line in out.splitlines() if line.strip().startswith(start))


def test_demo_shows_the_routed_swiglu_block(capsys):
    assert demo.run(steps=1, hidden=8) == 0
    out = capsys.readouterr().out
    assert _line(out, "route_report:") == "route_report: RouteReport(swiglu=1, packed=0, silu=0, unfused=())"
    assert _line(out, "custom calls in its gradient:") == (
        "custom calls in its gradient: 1 jax_ascend_silu_swiglu_grad, 0 jax_ascend_silu_silu_grad")
    memory = _line(out, "temporary memory")
    routed, unrouted, ratio = re.search(r"routed ([\d.]+) KiB, unrouted ([\d.]+) KiB \(([\d.]+)x\)", memory).groups()
    # The fused backward pass keeps only the SwiGLU's inputs, so XLA plans less (docs/performance.md's table).
    assert float(routed) < float(unrouted) and float(ratio) == pytest.approx(float(routed) / float(unrouted), abs=0.01)
    assert _line(out, "largest gradient difference vs unrouted").endswith("(OK, tolerance 1e-05)")


def test_demo_shows_the_gradient_at_the_root_and_at_infinity(capsys):
    assert demo.run(steps=1, hidden=8) == 0
    out = capsys.readouterr().out
    root, plus, minus = (_line(out, start).split() for start in (f"{demo.ROOT:.8g} (root)", "+inf", "-inf"))
    # x, "(root)", ours, its error, "ulp", jax.nn.silu's, its error, "ulp", the exact value
    assert float(root[3]) <= 4 and float(root[6]) > 4, root  # jax.nn.silu's autodiff is off near the root
    # At +-inf: ours, 0 ulp from the limit, and jax.nn.silu's NaN (no error to show), then the limit.
    assert plus[1:] == ["1", "0", "ulp", "nan", "1"] and minus[1:] == ["-0", "0", "ulp", "nan", "0"], (plus, minus)
    assert "within 4 ulp at the root, the limits at +-inf" in out


def test_demo_fails_when_route_does_not_fuse_the_swiglu(capsys, monkeypatch):
    monkeypatch.setattr(demo, "route", lambda f: f)
    assert demo.run(steps=1, hidden=8) == 1
    assert "FAIL: the SwiGLU was not fused into one call" in capsys.readouterr().out


def test_demo_fails_when_gradients_disagree(capsys, monkeypatch):
    @jax.custom_vjp
    def wrong_silu(x):
        return jax.nn.silu(x)

    wrong_silu.defvjp(lambda x: (jax.nn.silu(x), x), lambda x, g: (1.5 * jax.vjp(jax.nn.silu, x)[1](g)[0],))
    monkeypatch.setattr(demo, "silu", wrong_silu)
    assert demo.run(steps=10, hidden=16) == 1
    out = capsys.readouterr().out
    assert "(FAIL, tolerance" in _line(out, "largest gradient difference vs jax.nn.silu"), out
    assert _line(out, "this package:") == "this package: FAIL", out  # 1.5 times s'(x) is wrong at the root and inf


def test_demo_runs_exactly_the_steps_asked_for(capsys):
    assert demo.run(steps=30, hidden=16) == 0
    out = capsys.readouterr().out
    assert "for 30 steps" in out
    steps = [int(line.split()[1]) for line in out.splitlines() if line.strip().startswith("step ")]
    assert steps == [30], out
    assert demo.run(steps=120, hidden=16) == 0
    out = capsys.readouterr().out
    assert [int(line.split()[1]) for line in out.splitlines() if line.strip().startswith("step ")] == [50, 100, 120]
