"""One process of tests/test_multihost.py (not a test module itself).

    python multihost_worker.py OUT_DIR EXAMPLE_ARG...

Runs examples/train_data_parallel.py's main with EXAMPLE_ARG (which join the
processes), then, in the same runtime, the loss gradient on the example's mesh
and shardings; writes what the test checks to OUT_DIR/process<i>.json and the
gradients to OUT_DIR/grads<i>.npz.
"""

import importlib.util
import json
import pathlib
import sys

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

from jax_ascend_silu import silu
from jax_ascend_silu.demo import loss_fn

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "train_data_parallel.py"


def load_example():
    spec = importlib.util.spec_from_file_location("train_data_parallel", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(out_dir: str, argv: list[str]) -> int:
    ex = load_example()
    rc = ex.main(argv)
    args = ex.make_parser().parse_args(argv)
    mesh = ex.make_mesh()
    x, y = ex.global_batch(args.seed, args.batch)
    params, xs, ys = ex.place(mesh, ex.init_params(args.seed, (x.shape[1], args.hidden, args.hidden, y.shape[1])),
                              x, y)
    replicated, batch = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    grad_fn = jax.jit(jax.value_and_grad(lambda p, a, b: loss_fn(p, a, b, silu)),
                      in_shardings=(replicated, batch, batch), out_shardings=replicated)
    shapes, collectives = ex.describe_compiled(grad_fn.lower(params, xs, ys).compile())
    loss, grads = grad_fn(params, xs, ys)
    me = jax.process_index()
    info = {
        "example_rc": rc,
        "process_index": me,
        "process_count": jax.process_count(),
        "mesh_process_indices": [d.process_index for d in mesh.devices.flat],
        "local_devices": jax.local_device_count(),
        "x_shards": [list(s.data.shape) for s in xs.addressable_shards],
        "silu_grad_shapes": shapes,
        "collectives": collectives,
        "loss": float(loss),
    }
    out = pathlib.Path(out_dir)
    np.savez(out / f"grads{me}.npz", *[np.asarray(g) for g in jax.tree.leaves(grads)])
    (out / f"process{me}.json").write_text(json.dumps(info))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
