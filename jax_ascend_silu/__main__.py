"""Command line: ``python -m jax_ascend_silu {demo,info}``."""

from __future__ import annotations

import argparse
import sys


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _info(_: argparse.Namespace) -> int:
    import jax
    import jaxlib

    import jax_ascend_silu
    from jax_ascend_silu import _silu_grad_ext as ext

    print(f"jax_ascend_silu {jax_ascend_silu.__version__}")
    print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}")
    print(f"kernel ISA: {ext.isa()} (supported: {', '.join(ext.supported_isas())})")
    print(f"devices: {', '.join(str(d) for d in jax.devices())}")
    print("backends:")
    for name, status in jax_ascend_silu.backends().items():
        where = f"registered for {', '.join(status['platforms'])}" if status["platforms"] else "not registered"
        built = "compiled" if status["compiled"] else "not compiled"
        print(f"  {name:7s} {built}, {where} ({status['detail']})")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from jax_ascend_silu import demo

    return demo.run(steps=args.steps, hidden=args.hidden, seed=args.seed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="jax-ascend-silu", description="SiluGrad for JAX.")
    sub = parser.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="versions, kernel instruction set, devices, backends")
    info.set_defaults(func=_info)
    demo = sub.add_parser("demo", help="train a SiLU MLP and compare gradients with jax.nn.silu")
    demo.add_argument("--steps", type=_positive_int, default=300, help="training steps (default 300)")
    demo.add_argument("--hidden", type=_positive_int, default=64, help="hidden width (default 64)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.set_defaults(func=_demo)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
