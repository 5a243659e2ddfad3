"""How far CANN's ``aclnnSiluBackward`` (what the Ascend backend returns) is
from the exact result, in ulps of the result's dtype, next to this package's
CPU kernel on the same inputs.

ops-nn's silu_grad kernel computes sigma = 1/(1+e^-x), then
dy*sigma*(1 + x*(1-sigma)), each operation in float32 (float16/bfloat16 inputs
upcast, the result rounded to nearest even). This evaluates those operations
in the same order with NumPy's float32 on the host (the NPU's exp may differ
from NumPy's in the last bit), with grad_output = 1, against the float64
reference of the tests (tests/reference.py).

    python benchmarks/ascend_formula_accuracy.py

float32: x uniform over [-100, 100) and [-4, 4) (2^18 each, seeded) and the
2^16 floats nearest the root x0 = -1.27846; float16 and bfloat16: every finite x.
"""

from __future__ import annotations

import pathlib
import sys

import ml_dtypes
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))
import reference
from jax_ascend_silu import silu_grad


def cann_silu_grad(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """ops-nn's operations, one float32 rounding each, then one to x's dtype."""
    dy, xf, one = g.astype(np.float32), x.astype(np.float32), np.float32(1)
    with np.errstate(over="ignore", invalid="ignore"):
        sigma = one / (one + np.exp(-xf))
        return (dy * (sigma * (one + (one - sigma) * xf))).astype(x.dtype)


def inputs(dtype) -> np.ndarray:
    if np.dtype(dtype) != np.float32:
        bits = np.arange(1 << 16, dtype=np.uint16).view(dtype)
        return bits[np.isfinite(bits.astype(np.float32))]
    rng = np.random.default_rng(3)
    root = (np.float32(reference.X0_HI).view(np.int32) + np.arange(-(1 << 15), 1 << 15, dtype=np.int32)).view(
        np.float32)
    return np.concatenate([rng.uniform(-100, 100, 1 << 18).astype(np.float32),
                           rng.uniform(-4, 4, 1 << 18).astype(np.float32), root])


def main() -> int:
    print("| dtype | backend | max ulp | max ulp beyond 0.05 of the root | max absolute error | at x = +-inf |")
    print("|---|---|---|---|---|---|")
    for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
        x = inputs(dtype)
        g = np.ones_like(x)
        exact = reference.silu_grad(g, x)
        far = np.abs(x.astype(np.float64) - reference.X0_HI) > 0.05
        inf = np.array([np.inf, -np.inf], dtype)
        for name, fn in (("ascend (CANN's formula)", cann_silu_grad),
                         ("cpu, cuda (this kernel)", lambda a, b: np.asarray(silu_grad(a, b)))):
            out = fn(g, x)
            err = reference.ulp_error(out, exact, dtype)
            absolute = np.abs(out.astype(np.float64) - exact)
            at_inf = ", ".join(str(v) for v in fn(np.ones_like(inf), inf).astype(np.float32))
            print(f"| {np.dtype(dtype).name} | {name} | {err.max():.3g} | {err[far].max():.3g} "
                  f"| {absolute.max():.2g} | {at_inf} |")
        # Below -88.7 float32's exp overflows and CANN's result is 0: an error only
        # where the dtype can hold the exact value (bfloat16 has float32's range).
        low = x.astype(np.float64) < -88.7
        low_err = reference.ulp_error(cann_silu_grad(g[low], x[low]), exact[low], dtype)
        if low.any() and low_err.max() > 1:
            print(f"| {np.dtype(dtype).name} | ascend, x < -88.7 only | {low_err.max():.3g} | | "
                  f"{np.abs(exact[low]).max():.2g} | (CANN gives 0 there) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
