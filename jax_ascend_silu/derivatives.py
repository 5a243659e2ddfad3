"""SiLU's first and second derivatives in plain ``jax.numpy``.

The JVP rules use these: written as ordinary jnp code they fuse with their
neighbours, transpose, batch and shard like any elementwise op. Both return
float32 (or wider) for any input dtype, so callers round a whole product once.
At x = +-inf they return their limits (as the kernel does for s'), not the NaN
that ``inf * 0`` would give.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp


def _with_limits(formula, x, at_pos_inf, at_neg_inf):
    """formula(x) in float32 or wider, with the given limits at +-inf."""
    wide = wide_float(x)
    inf = jnp.isinf(wide)
    safe = jnp.where(inf, jnp.zeros_like(wide), wide)  # keeps inf out of every branch's gradient
    out = jnp.where(inf, jnp.where(wide > 0, at_pos_inf, at_neg_inf), formula(safe))
    return out


def wide_float(a):
    """``a`` in float32, or as is when already wider."""
    return a.astype(jnp.promote_types(a.dtype, jnp.float32))


# The root of s', x0 = -1 - W(1/e), as a float32 pair hi + lo, and c = e^x0 = -1 - x0.
_ROOT_HI = -1.2784645557403564  # float32 nearest x0
_ROOT_LO = 1.2979283e-08  # x0 - _ROOT_HI, rounded to float32
_ROOT_C = 0.27846455574035645
# Below _SCALE_BELOW, e^x is carried times 2^_SCALE_BITS (normal where float32's
# would be subnormal) and the product is scaled back twice by _UNSCALE.
_SCALE_BELOW, _SCALE_BITS, _UNSCALE = -64.0, 160, 2.0**-80
_CLAMP = 250.0  # beyond, |grad_output| * |s'(x) - limit| < 2^-149 for any float32 grad_output
_LN2_HI, _LN2_LO = 0.693145751953125, 1.4286067653e-06  # ln 2 = hi + lo, hi with 15 significant bits


def times_silu_prime(g, x):
    """g * s'(x) in float32 (or wider), accurate to a few ulp for every input,
    with s'(x) written so that nothing cancels or overflows (E = e^-|x|):

        x > 0:   s'(x) = (1 + E*(1 + x)) / (1 + E)^2
        x <= 0:  s'(x) = E*(1 + x + E) / (1 + E)^2

    ``1 + x + E`` vanishes at the root x0 = -1.27846...; within 0.5 of it the
    exact identity 1 + x + e^x = d + c*expm1(d), d = x - x0, c = e^x0, has two
    terms of one sign, so relative accuracy holds up to the root (x0 is
    carried as two float32s, hi + lo). Below x = -64
    E is scaled by a power of two, so a large g meets a normal-range s'(x).
    The limits at +-inf are g and g * -0.0 (s' tends to 0 from below)."""
    g, x = wide_float(g), wide_float(x)
    dtype = x.dtype

    def const(v):
        return jnp.asarray(v, dtype)

    scaled = x < _SCALE_BELOW
    xc = jnp.clip(x, -_CLAMP, _CLAMP)
    z = -jnp.abs(xc)
    # e^z * 2^160 where scaled, by Cody-Waite reduction: z - n ln2 is exact in its high part.
    n = jnp.round(z * const(1.4426950408889634))
    r = (z - n * const(_LN2_HI)) - n * const(_LN2_LO)
    e_scaled = jnp.ldexp(jnp.exp(r), (n + _SCALE_BITS).astype(jnp.int32))
    e = jnp.where(scaled, e_scaled, jnp.exp(z))
    e_den = jnp.where(scaled, jnp.zeros_like(e), e)  # (1 + E)^2 is 1 there
    p = const(1) + xc  # exact for x <= -0.5
    # Near the root: 1 + x + E = d * P, d = x - x0 = t - lo (t = x - hi exact),
    # P = -x0 + c*q, q = expm1(d)/d - 1 by its Taylor series (|d| < 0.5).
    # g is taken as t*P - lo*P: XLA folds a chain of constant subtractions into
    # one rounded constant, which would lose lo; P needs d only roughly.
    t = x - const(_ROOT_HI)
    d = t - const(_ROOT_LO)
    near = jnp.abs(d) < 0.5
    q = jnp.zeros_like(d)
    for k in range(11, 1, -1):
        q = (q + const(1 / math.factorial(k))) * d
    big_p = const(-_ROOT_HI) + const(_ROOT_C) * q
    g_near = t * big_p - const(_ROOT_LO) * big_p
    # Elsewhere 1 + x + E as a sum and its rounding error (TwoSum), and
    # 1 + E likewise, so neither rounding reaches the quotient.
    a, a_err = _two_sum(p, e_den)
    a = jnp.where(near, g_near, a)
    a_err = jnp.where(near, jnp.zeros_like(a_err), a_err)
    u, u_err = _two_sum(const(1), e_den)
    num = jnp.where(x > 0, e * p + const(1), e * a)
    # (E*a) / u^2 with the rounding errors of E*a, u and u^2 carried as low
    # parts (Dekker's exact products), so that only the division and the last
    # products round: XLA's own rewrite of num/u/u to num/(u*u) adds no error.
    num_lo = jnp.where(x > 0, jnp.zeros_like(a), _product_error(e, a, num) + e * a_err)
    den = u * u
    den_lo = _product_error(u, u, den) + const(2) * u * u_err
    ds = num / den
    nonzero = jnp.where(num == 0, jnp.ones_like(num), num)
    ds = ds + ds * (num_lo / nonzero - den_lo / den)
    scale = jnp.where(scaled, const(_UNSCALE), const(1))
    out = ((g * scale) * ds) * scale
    out = jnp.where(x == jnp.inf, g, out)
    return jnp.where(x == -jnp.inf, g * const(-0.0), out)


def _two_sum(a, b):
    """a + b rounded, and its rounding error (Knuth's TwoSum, exact in IEEE arithmetic)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a):
    """a = hi + lo with 12-bit halves, whose products are exact (Dekker)."""
    c = a * jnp.asarray(4097.0, a.dtype)
    hi = c - (c - a)
    return hi, a - hi


def _product_error(a, b, p):
    """a*b - p exactly, for p = a*b rounded (Dekker's TwoProduct, no FMA needed)."""
    ah, al = _split(a)
    bh, bl = _split(b)
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl


def silu_prime(x):
    """s'(x) = sigma(x) * (1 + x * (1 - sigma(x))), the factor SiluGrad applies."""
    return times_silu_prime(jnp.ones_like(x), x)


def silu_second(x):
    """s''(x) = sigma(x) * (1 - sigma(x)) * (2 + x * (1 - 2 sigma(x)))."""

    def formula(v):
        sig = jax.nn.sigmoid(v)
        return sig * (1 - sig) * (2 + v * (1 - 2 * sig))

    return _with_limits(formula, x, 0.0, 0.0)
