"""How far PyTorch's ``aten.silu_backward`` and this package's ``silu_grad``
are from the exact result, on the same inputs, in ulps of the result's dtype.

The speed comparison with PyTorch (``python -m jax_ascend_silu bench``) is
between two different accuracies: this reads both against the float64
reference of the tests (tests/reference.py), with grad_output = 1.

    python benchmarks/peer_accuracy.py [--log2-samples 22]

float32: x uniform over [-20, 20) and the 2^16 floats nearest the root
x0 = -1.27846 (where s'(x) = 0); float16 and bfloat16: every finite x.
Needs torch (the ``[torch]`` extra).
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import jax.numpy as jnp
import ml_dtypes
import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))
import reference
from jax_ascend_silu import silu_grad
from jax_ascend_silu.bench.elementwise import _to_torch  # bfloat16 travels as raw bits

REGIONS = ((-np.inf, -4), (-4, -1.4), (-1.4, -1.15), (-1.15, 0), (0, 4), (4, np.inf))


def float32_inputs(log2_samples: int) -> tuple[np.ndarray, np.ndarray]:
    """Uniform x, and the floats nearest the root (as a mask over the result)."""
    uniform = np.random.default_rng(0).uniform(-20, 20, 1 << log2_samples).astype(np.float32)
    root = np.float32(reference.X0_HI)
    below = root - np.arange(1, 1 << 15, dtype=np.float32) * np.spacing(root)
    above = root + np.arange(0, 1 << 15, dtype=np.float32) * np.spacing(root)
    near = np.concatenate([below, above])
    return np.concatenate([uniform, near]), np.r_[np.zeros(uniform.size, bool), np.ones(near.size, bool)]


def every_finite(dtype) -> np.ndarray:
    bits = np.arange(1 << 16, dtype=np.uint16).view(dtype)
    return bits[np.isfinite(bits.astype(np.float32))]


def torch_silu_grad(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    out = torch.ops.aten.silu_backward(_to_torch(torch, g), _to_torch(torch, x))
    if x.dtype == ml_dtypes.bfloat16:  # NumPy has no bfloat16: back as raw bits
        return out.view(torch.int16).numpy().view(x.dtype)
    return out.numpy()


def rows(dtype, x: np.ndarray, near_root: np.ndarray | None):
    g = np.ones_like(x)
    exact = reference.silu_grad(g, x)
    errors = {
        "PyTorch silu_backward": reference.ulp_error(torch_silu_grad(g, x), exact, dtype),
        "jax_ascend_silu": reference.ulp_error(np.asarray(silu_grad(jnp.asarray(g), jnp.asarray(x))), exact, dtype),
    }
    x64 = x.astype(np.float64)
    regions = [(f"[{lo:g}, {hi:g})", (x64 >= lo) & (x64 < hi)) for lo, hi in REGIONS]
    if near_root is not None:
        regions = [(name, m & ~near_root) for name, m in regions] + [("2^16 floats nearest x0", near_root)]
    for name, mask in regions:
        cells = [f"{e[mask].max():.3g} / {np.mean(e[mask] > reference.MAX_ULP[np.dtype(dtype)]):.1%}"
                 for e in errors.values()]
        yield f"| {np.dtype(dtype).name} | {name} | {mask.sum()} | " + " | ".join(cells) + " |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log2-samples", type=int, default=22, help="uniform float32 samples (default 2^22)")
    args = parser.parse_args()
    print("Max error in ulps / share of inputs past the promised bound (4 ulp float32, 1 ulp halves), "
          "grad_output = 1, against tests/reference.py's float64 values")
    print()
    print("| dtype | x | inputs | PyTorch silu_backward | jax_ascend_silu |")
    print("|---|---|---|---|---|")
    x, near = float32_inputs(args.log2_samples)
    for line in rows(np.float32, x, near):
        print(line)
    for dtype in (np.float16, ml_dtypes.bfloat16):
        for line in rows(dtype, every_finite(dtype), None):
            print(line)
    print()
    print(f"torch {torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
