"""Data-parallel training of a SiLU MLP over every device JAX sees.

The batch is sharded over a 'data' mesh axis and the parameters are
replicated. One jitted step computes the loss and the gradients: each SiLU's
backward pass runs the SiluGrad custom call on the device's own rows of the
batch (the script prints the per-device shape from the compiled step), and
XLA sums the weight gradients across devices.

Multi-host: call ``jax.distributed.initialize()`` first on every host; then
``jax.devices()`` lists all hosts' devices and each process contributes its
own rows of the batch, so the same script trains on all of them.

    python examples/train_data_parallel.py [--steps 200] [--batch 512] [--hidden 64]

On a CPU-only machine, ``XLA_FLAGS=--xla_force_host_platform_device_count=8``
gives JAX 8 devices to spread over.
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=512, help="global batch size")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    devices = jax.devices()
    if args.steps < 1:
        parser.error(f"--steps must be positive, got {args.steps}")
    if args.batch % len(devices):
        parser.error(f"--batch {args.batch} must be a multiple of the device count ({len(devices)})")
    mesh = Mesh(np.array(devices), ("data",))
    print(f"{len(devices)} devices ({devices[0].platform}), {jax.process_count()} process(es); "
          f"global batch {args.batch} sharded over 'data', parameters replicated")

    # Each process makes its own rows of the global batch.
    rows = args.batch // jax.process_count()
    k_data, k_init = jax.random.split(jax.random.PRNGKey(args.seed))
    x_local, y_local = synthetic_data(jax.random.fold_in(k_data, jax.process_index()), n=rows)
    batch = NamedSharding(mesh, P("data"))
    x = jax.make_array_from_process_local_data(batch, np.asarray(x_local))
    y = jax.make_array_from_process_local_data(batch, np.asarray(y_local))
    params = jax.device_put(init_mlp(k_init, (x.shape[1], args.hidden, args.hidden, y.shape[1])),
                            NamedSharding(mesh, P()))

    train_step = make_train_step(mesh, args.lr)
    shapes, collectives = describe_compiled(train_step.lower(params, x, y).compile())
    print(f"SiluGrad custom calls per device: {', '.join(shapes)}")
    print(f"collectives in the step: {', '.join(collectives) or 'none'}")

    every = max(1, args.steps // 10)
    first = None
    for i in range(1, args.steps + 1):
        params, loss = train_step(params, x, y)
        if i == 1 or i % every == 0 or i == args.steps:
            loss = float(loss)
            first = loss if first is None else first
            print(f"step {i:5d}  loss {loss:.6f}")
    return 0 if np.isfinite(loss) and loss < first else 1


if __name__ == "__main__":
    sys.exit(main())
