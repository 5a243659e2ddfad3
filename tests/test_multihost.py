"""Two JAX processes on this machine, joined by jax.distributed.initialize (gloo
CPU collectives), each with 4 CPU devices: examples/train_data_parallel.py
trains on one 8-device mesh over both, every SiluGrad call runs on a device's
own rows with no gather, and the gradients equal a single-process run's on the
same global batch."""

import json
import os
import pathlib
import socket
import subprocess
import sys
import time

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import jax_ascend_silu as jas
from checks import assert_close_at_scale
from jax_ascend_silu.demo import loss_fn

WORKER = pathlib.Path(__file__).resolve().parent / "multihost_worker.py"
PROCESSES, LOCAL_DEVICES = 2, 4
BATCH, HIDDEN, STEPS, SEED = 64, 16, 5, 3
#: Both processes together; a healthy run takes a fraction of this.
DEADLINE_S = 240


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_processes(tmp_path: pathlib.Path) -> list[str]:
    """Starts every process, waits until all exit or the deadline passes, and
    always reaps all of them; returns each one's combined output."""
    port = _free_port()
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               XLA_FLAGS=f"--xla_force_host_platform_device_count={LOCAL_DEVICES}")
    example_args = ["--steps", str(STEPS), "--batch", str(BATCH), "--hidden", str(HIDDEN), "--seed", str(SEED),
                    "--coordinator", f"127.0.0.1:{port}", "--num-processes", str(PROCESSES)]
    logs = [tmp_path / f"process{i}.log" for i in range(PROCESSES)]
    procs: list[subprocess.Popen] = []
    timed_out = False
    try:
        for i, log in enumerate(logs):
            with log.open("w") as sink:
                procs.append(subprocess.Popen(
                    [sys.executable, str(WORKER), str(tmp_path), *example_args, "--process-id", str(i)],
                    cwd=tmp_path, env=env, stdout=sink, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + DEADLINE_S
        for p in procs:
            try:
                p.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
                break
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        for p in procs:
            p.wait()
    outputs = [log.read_text() for log in logs]
    report = "\n".join(f"--- process {i} (exit {p.returncode}) ---\n{out}" for i, (p, out) in
                       enumerate(zip(procs, outputs)))
    assert not timed_out, f"not done within {DEADLINE_S} s; both processes killed\n{report}"
    assert all(p.returncode == 0 for p in procs), report
    return outputs


def _single_process_reference():
    """The same global batch and parameters on this process's 8 devices, and
    unsharded with jax.nn.silu's own autodiff."""
    from multihost_worker import load_example

    ex = load_example()
    devices = jax.devices("cpu")
    assert len(devices) >= 8, "needs the 8 CPU devices tests/conftest.py sets up"
    mesh = Mesh(np.array(devices[:8]), ("data",))
    x, y = ex.global_batch(SEED, BATCH)
    params = ex.init_params(SEED, (x.shape[1], HIDDEN, HIDDEN, y.shape[1]))
    placed, xs, ys = ex.place(mesh, params, x, y)
    replicated, batch = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    sharded = jax.jit(jax.value_and_grad(lambda p, a, b: loss_fn(p, a, b, jas.silu)),
                      in_shardings=(replicated, batch, batch), out_shardings=replicated)(placed, xs, ys)
    native = jax.value_and_grad(lambda p: loss_fn(p, x, y, jax.nn.silu))(params)
    return sharded, native


def test_two_processes_one_mesh_per_shard_silu_grad_same_gradients(tmp_path):
    outputs = _run_processes(tmp_path)
    infos = [json.loads((tmp_path / f"process{i}.json").read_text()) for i in range(PROCESSES)]
    rows = BATCH // (PROCESSES * LOCAL_DEVICES)
    for i, (info, out) in enumerate(zip(infos, outputs)):
        # One mesh over both processes' devices; this process holds 4 shards of 8 rows.
        assert info["process_index"] == i and info["process_count"] == PROCESSES
        assert sorted(info["mesh_process_indices"]) == [0] * LOCAL_DEVICES + [1] * LOCAL_DEVICES
        assert info["local_devices"] == LOCAL_DEVICES
        assert info["x_shards"] == [[rows, 16]] * LOCAL_DEVICES
        # Each SiLU's backward pass: one SiluGrad call on the device's rows;
        # the only collective is the sum of the weight gradients.
        assert info["silu_grad_shapes"] == [f"f32[{rows},{HIDDEN}]"] * 2
        assert info["collectives"] == ["all-reduce"]
        # The example itself, as README runs it.
        assert info["example_rc"] == 0
        prefix = f"[process {i}/{PROCESSES}] "
        assert f"{prefix}8 devices (cpu), 2 process(es), 4 here" in out
        assert f"{prefix}SiluGrad custom calls per device: f32[{rows},{HIDDEN}], f32[{rows},{HIDDEN}]\n" in out
        assert f"{prefix}collectives in the step: all-reduce\n" in out
    assert "step     1  loss" in outputs[0] and "step     1" not in outputs[1]
    finals = {line.split()[-1] for out in outputs for line in out.splitlines() if "final loss" in line}
    assert len(finals) == 1, finals  # both processes see the same replicated loss

    (sharded_loss, sharded_grads), (native_loss, native_grads) = _single_process_reference()
    for i, info in enumerate(infos):
        with np.load(tmp_path / f"grads{i}.npz") as saved:
            grads = [saved[f"arr_{k}"] for k in range(len(saved.files))]
        assert len(grads) == len(jax.tree.leaves(sharded_grads))
        np.testing.assert_allclose(info["loss"], sharded_loss, rtol=1e-6)
        np.testing.assert_allclose(info["loss"], native_loss, rtol=1e-5)
        for got, same_code, native in zip(grads, jax.tree.leaves(sharded_grads), jax.tree.leaves(native_grads)):
            assert_close_at_scale(got, same_code, rtol=1e-5, atol=1e-7)
            assert_close_at_scale(got, native, rtol=2e-5, atol=2e-6)
