"""Command line: ``jax-ascend-silu {info,demo,bench}`` (the console script),
or ``python -m jax_ascend_silu {info,demo,bench}``."""

from __future__ import annotations

import argparse
import os
import sys


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _info(_: argparse.Namespace) -> int:
    import jax
    import jaxlib

    import jax_ascend_silu
    from jax_ascend_silu import _environment
    from jax_ascend_silu._ffi import BACKENDS, ext  # ext: the compiled CPU module

    print(f"jax_ascend_silu {jax_ascend_silu.__version__}")
    print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}")
    print(f"kernel ISA: {ext.isa()} (supported: {', '.join(ext.supported_isas())})")
    print(f"devices: {', '.join(str(d) for d in jax.devices())}")
    cap = _environment.threads_cap()
    print(f"CPU threads per call: the calling thread + a helper per other CPU ({len(os.sched_getaffinity(0))} CPUs "
          "allowed)"
          + (f", capped at {cap} by {_environment.THREADS}" if cap else ""))
    isa = _environment.isa_cap()
    if isa:
        print(f"kernel ISA {isa}, chosen by {_environment.ISA}")
    for line in _environment.problems():
        print(f"note: {line}")
    print("backends:")
    table = {backend.name: backend for backend in BACKENDS}
    for name, status in jax_ascend_silu.backends().items():
        where = f"registered for {', '.join(status['platforms'])}" if status["platforms"] else "not registered"
        built = "compiled" if status["compiled"] else "not compiled"
        print(f"  {name:7s} {built}, {where} ({status['detail']})")
        if status["compiled"]:
            print(f"          SiluGrad computes: {table[name].numbers}")
            print(f"          SwiGluGrad computes: {table[name].swiglu_numbers}")
        if "cann" in status:
            _print_ascend(status)
        elif "registration" in status:
            print(f"          handler registration reached jax's {name.upper()} plugin: {status['registration']}")
    return 0


def _print_ascend(status: dict) -> None:
    """What the run-time search for CANN found, and the state of the ASCEND PJRT backend."""
    cann = status["cann"]
    if cann["found"]:
        for lib in cann["libraries"]:
            label = "aclnnSiluBackward from" if lib["path"] == cann["operator_library"] else lib["role"]
            print(f"          {label}: {lib['path']} ({lib['origin']})")
        # SwiGluGrad's operator, looked up on its own; why it is missing is among the notes below.
        if cann.get("swiglu_operator_library") and not cann.get("swiglu_problem"):
            print(f"          aclnnSwiGluGrad from: {cann['swiglu_operator_library']}")
        else:
            print("          aclnnSwiGluGrad: not found (SwiGluGrad on Ascend fails as the note below says; "
                  "SiluGrad runs)")
        print(f"          CANN version: {cann['version'] or 'not reported (' + cann['version_note'] + ')'}")
        for note in cann["notes"]:  # a note of several lines keeps its indent
            print("          note: " + "\n                ".join(note.splitlines()))
    else:
        print("          missing (set ASCEND_HOME_PATH, e.g. by sourcing CANN's set_env.sh):")
        for line in cann["problem"].splitlines():
            print(f"            {line}")
    print(f"          PJRT backend for ASCEND: {'yes' if status['pjrt_backend'] else 'no'} ({status['pjrt']})")
    print(f"          handler registration reached it: {status['registration']}")


def _demo(args: argparse.Namespace) -> int:
    from jax_ascend_silu import demo

    return demo.run(steps=args.steps, hidden=args.hidden, seed=args.seed)


def _bench(args: argparse.Namespace) -> int:
    from jax_ascend_silu import bench

    return bench.run(args)


def _log2_sizes(text: str) -> list[int]:
    try:
        sizes = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated exponents like 10,16,20; got {text}") from None
    if not sizes or any(not 0 <= v <= 30 for v in sizes):
        raise argparse.ArgumentTypeError(f"exponents must lie in 0..30, got {text}")
    return sizes


#: How the console script is run; ``python -m jax_ascend_silu`` passes its own.
PROG = "jax-ascend-silu"


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    """Runs the command line; ``prog`` is how the user ran it, for usage and error lines."""
    from jax_ascend_silu._version import __version__
    from jax_ascend_silu.operands import DTYPES

    parser = argparse.ArgumentParser(prog=prog, description="SiluGrad and SwiGLU for JAX.")
    parser.add_argument("--version", action="version", version=f"jax_ascend_silu {__version__}")
    # Not required=True: argparse would then report a missing command before an
    # unknown flag (`--bogus` alone), so both are checked below, flags first.
    sub = parser.add_subparsers(dest="command", metavar="{info,demo,bench}")
    info = sub.add_parser("info", help="versions, kernel instruction set, devices, backends")
    info.set_defaults(func=_info)
    demo = sub.add_parser("demo", help="train a SiLU MLP, route a SwiGLU block, show the gradient at the root and "
                                       "at +-inf; compare each with jax.nn.silu")
    demo.add_argument("--steps", type=_positive_int, default=300, help="training steps (default 300)")
    demo.add_argument("--hidden", type=_positive_int, default=64, help="the MLP's hidden width (default 64)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.set_defaults(func=_demo)
    bench = sub.add_parser("bench", help="time SiluGrad against XLA autodiff, PyTorch and a bandwidth bound")
    bench.add_argument("--quick", action="store_true", help="sizes 2^12, 2^16, 2^20, 2^24 and fewer repeats")
    bench.add_argument("--sizes", type=_log2_sizes, help="comma-separated log2 sizes (default 10,12,...,26)")
    bench.add_argument("--dtypes", nargs="+", choices=list(DTYPES), help="default: all of them")
    bench.add_argument("--only", nargs="+", choices=["sweep", "loop", "mlp"], help="default: all three benchmarks")
    bench.add_argument("--repeats", type=_positive_int,
                       help="minimum interleaved rounds per case (default 15, quick 5)")
    bench.add_argument("--out", default="bench_out", help="folder for the JSON and the PNG plot (default bench_out)")
    bench.add_argument("--markdown", metavar="FILE",
                       help="also write the tables into FILE between its bench-table markers "
                            "(e.g. docs/performance.md)")
    bench.add_argument("--no-progress", action="store_true", help="no progress bar or progress lines")
    bench.set_defaults(func=_bench)
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        # Usage of the command being run, when there is one.
        (sub.choices[args.command] if args.command else parser).error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command is None:
        parser.error(f"a command is required: one of {', '.join(sub.choices)} (try {prog} info)")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main(prog="python -m jax_ascend_silu"))
