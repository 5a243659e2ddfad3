"""Data-parallel training of a SiLU MLP over every device of every process.

The batch is sharded over a 'data' mesh axis and the parameters are
replicated. One jitted step computes the loss and the gradients: each SiLU's
backward pass runs the SiluGrad custom call on the device's own rows of the
batch (the script prints the per-device shape from the compiled step), and
XLA sums the weight gradients across devices.

One process, all its devices:

    python examples/train_data_parallel.py [--steps 200] [--batch 512] [--hidden 64]

Several processes (hosts) form one mesh through JAX's multi-controller runtime
(``jax.distributed.initialize``): start the same command once per process with
the coordinator's address (process 0's host and a free port), the number of
processes and each one's id. On CPU, the processes exchange data with gloo.
On a cluster JAX knows (Slurm, Open MPI, Cloud TPU), ``--distributed`` alone
lets it detect all three.

On a CPU-only machine, ``XLA_FLAGS=--xla_force_host_platform_device_count=8``
gives JAX 8 devices (per process) to spread over.
"""

from __future__ import annotations

import argparse
import re
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from jax_ascend_silu import silu
from jax_ascend_silu.demo import init_mlp, loss_fn, synthetic_data


def join_processes(coordinator: str | None, num_processes: int | None, process_id: int | None,
                   auto: bool) -> None:
    """Joins the other processes (no-op for a single process): afterwards
    jax.devices() lists every process's devices."""
    if coordinator is None and num_processes is None and process_id is None and not auto:
        return
    # gloo is JAX's default for CPU collectives across processes; named here
    # because a CPU run needs some implementation and this one needs no MPI.
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=coordinator, num_processes=num_processes,
                               process_id=process_id)


def make_mesh() -> Mesh:
    """One 'data' axis over every device of every process."""
    return Mesh(np.array(jax.devices()), ("data",))


def global_batch(seed: int, n: int):
    """The whole batch, identical in every process (it is small and made from
    the seed): each process then puts only its own devices' rows on them."""
    x, y = synthetic_data(jax.random.fold_in(jax.random.PRNGKey(seed), 0), n=n)
    return np.asarray(x), np.asarray(y)


def init_params(seed: int, sizes: tuple[int, ...]):
    return jax.tree.map(np.asarray, init_mlp(jax.random.fold_in(jax.random.PRNGKey(seed), 1), sizes))


def place(mesh: Mesh, params, x: np.ndarray, y: np.ndarray):
    """Parameters replicated, batch rows split over 'data'. Each process fills
    only the shards of its own devices (a real input pipeline would read only
    those rows: see NamedSharding.addressable_devices_indices_map)."""
    batch, replicated = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())

    def put(a, sharding):
        return jax.make_array_from_callback(a.shape, sharding, lambda index: a[index])

    return jax.tree.map(lambda a: put(a, replicated), params), put(x, batch), put(y, batch)


def make_train_step(mesh: Mesh, lr: float):
    replicated, batch = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))

    def step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y, silu)
        return jax.tree.map(lambda p, g: p - lr * g, params, grads), loss

    return jax.jit(step, in_shardings=(replicated, batch, batch), out_shardings=(replicated, replicated),
                   donate_argnums=0)


def describe_compiled(compiled) -> tuple[list[str], list[str]]:
    """Result shapes of the SiluGrad custom calls, and the collectives, in a compiled program."""
    hlo = compiled.as_text()
    shapes = re.findall(r"= \(?(\w+\[[\d,]*\])[^=]*custom_call_target=\"jax_ascend_silu_silu_grad\"", hlo)
    kinds = ("all-gather", "all-reduce", "all-to-all", "collective-permute", "reduce-scatter")
    return shapes, [kind for kind in kinds if kind in hlo]


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=512, help="global batch size, over all processes")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    multi = parser.add_argument_group("several processes (jax.distributed.initialize)")
    multi.add_argument("--coordinator", metavar="HOST:PORT", help="process 0's address and a free port")
    multi.add_argument("--num-processes", type=int, help="how many processes take part")
    multi.add_argument("--process-id", type=int, help="this process's id, 0 .. num-processes - 1")
    multi.add_argument("--distributed", action="store_true",
                       help="join the other processes, letting JAX detect what is not given (clusters)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error(f"--steps must be positive, got {args.steps}")
    given = [args.coordinator is not None, args.num_processes is not None, args.process_id is not None]
    if any(given) and not all(given) and not args.distributed:
        parser.error("--coordinator, --num-processes and --process-id go together "
                     "(or add --distributed to let JAX detect the others on a cluster)")
    join_processes(args.coordinator, args.num_processes, args.process_id, args.distributed)
    mesh = make_mesh()
    n_devices, me, n_processes = mesh.devices.size, jax.process_index(), jax.process_count()
    if args.batch % n_devices:
        parser.error(f"--batch {args.batch} must be a multiple of the device count ({n_devices})")

    def say(text: str) -> None:
        # One write per line, so lines of processes sharing a terminal do not interleave.
        sys.stdout.write((f"[process {me}/{n_processes}] {text}" if n_processes > 1 else text) + "\n")
        sys.stdout.flush()

    say(f"{n_devices} devices ({jax.devices()[0].platform}), {n_processes} process(es), "
        f"{jax.local_device_count()} here; global batch {args.batch} sharded over 'data', parameters replicated")

    x, y = global_batch(args.seed, args.batch)
    params, x, y = place(mesh, init_params(args.seed, (x.shape[1], args.hidden, args.hidden, y.shape[1])), x, y)
    train_step = make_train_step(mesh, args.lr)
    shapes, collectives = describe_compiled(train_step.lower(params, x, y).compile())
    say(f"SiluGrad custom calls per device: {', '.join(shapes)}")
    say(f"collectives in the step: {', '.join(collectives) or 'none'}")

    every = max(1, args.steps // 10)
    first = None
    for i in range(1, args.steps + 1):
        params, loss = train_step(params, x, y)
        if i == 1 or i % every == 0 or i == args.steps:
            loss = float(loss)  # replicated: every process holds the whole value
            first = loss if first is None else first
            if me == 0:
                say(f"step {i:5d}  loss {loss:.6f}")
    if n_processes > 1:
        say(f"final loss {loss:.6f}")
    return 0 if np.isfinite(loss) and loss < first else 1


if __name__ == "__main__":
    sys.exit(main())
