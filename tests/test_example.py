"""examples/train_data_parallel.py: data-parallel training over 8 devices."""

import os
import re
import subprocess
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from jax_ascend_silu.demo import init_mlp, loss_fn, synthetic_data
from multihost_worker import EXAMPLE as SCRIPT, load_example as _load_example


def test_script_trains_on_eight_devices(tmp_path):
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    run = subprocess.run([sys.executable, str(SCRIPT), "--steps", "30", "--batch", "64", "--hidden", "16"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    assert out.startswith("8 devices (cpu)")
    # Each device's SiluGrad calls see its 64 / 8 = 8 rows; only the gradient sum communicates.
    assert "SiluGrad custom calls per device: f32[8,16], f32[8,16]" in out
    assert "collectives in the step: all-reduce\n" in out
    losses = [float(v) for v in re.findall(r"loss (\S+)", out)]
    assert len(losses) >= 2 and losses[-1] < 0.6 * losses[0]


def test_sharded_step_equals_single_device_step_with_jax_nn_silu():
    devices = jax.devices("cpu")
    assert len(devices) >= 8, "needs the 8 CPU devices tests/conftest.py sets up"
    mesh = Mesh(np.array(devices[:8]), ("data",))
    k_data, k_init = jax.random.split(jax.random.PRNGKey(5))
    x, y = synthetic_data(k_data, n=64)
    params = init_mlp(k_init, (x.shape[1], 16, 16, y.shape[1]))

    batch = NamedSharding(mesh, P("data"))
    replicated = jax.device_put(jax.tree.map(np.array, params), NamedSharding(mesh, P()))  # donated by the step
    sharded_params, sharded_loss = _load_example().make_train_step(mesh, lr=0.05)(
        replicated, jax.device_put(x, batch), jax.device_put(y, batch))

    loss, grads = jax.value_and_grad(loss_fn)(params, x, y, jax.nn.silu)
    np.testing.assert_allclose(sharded_loss, loss, rtol=1e-5)
    for got, p, g in zip(jax.tree.leaves(sharded_params), jax.tree.leaves(params), jax.tree.leaves(grads)):
        assert got.sharding.is_fully_replicated
        np.testing.assert_allclose(got, p - 0.05 * g, rtol=1e-5, atol=1e-6)


def test_multi_process_flags_go_together(capsys):
    example = _load_example()
    for partial in (["--coordinator", "127.0.0.1:1"], ["--num-processes", "2", "--process-id", "0"]):
        try:
            example.main(partial)
        except SystemExit as stop:
            assert stop.code == 2
        else:
            raise AssertionError(f"{partial} was accepted")
        assert "--coordinator, --num-processes and --process-id go together" in capsys.readouterr().err
