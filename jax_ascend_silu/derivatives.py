"""SiLU's first and second derivatives as XLA evaluates them.

s'(x) and s''(x) are written in ``jax.numpy`` and used as lowerings (of
``silu_tangent_p`` in op.py and of ``silu_second_p`` here), so under ``jit``
they fuse with their neighbours like any elementwise op; their batching,
transposes and derivatives are those primitives' rules. Both return float32
(or wider) for any input dtype, so callers round a whole product once. s'(x)
is as accurate as the kernel's (forward mode meets reverse mode's bounds);
s''(x) loses relative accuracy only next to its roots. At x = +-inf they
return their limits (as the kernel does for s'), not the NaN that ``inf * 0``
would give.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
from jax import lax

from ._primitive import elementwise_primitive


def wide_float(a):
    """``a`` in float32, or as is when already wider. Decided by width, not by
    ``jnp.promote_types``, which strict dtype promotion refuses for half types."""
    return a if jnp.finfo(a.dtype).bits >= 32 else a.astype(jnp.float32)


# The root of s', x0 = -1 - W(1/e), as a float32 pair hi + lo, and c = e^x0 = -1 - x0.
_ROOT_HI = -1.2784645557403564  # float32 nearest x0
_ROOT_LO = 1.2979283e-08  # x0 - _ROOT_HI, rounded to float32
_ROOT_C = 0.27846455574035645
# Below _SCALE_BELOW, e^x is carried times 2^_SCALE_BITS (normal where float32's
# would be subnormal) and the product is scaled back twice by _UNSCALE.
_SCALE_BELOW, _SCALE_BITS, _UNSCALE = -64.0, 160, 2.0**-80
_CLAMP = 250.0  # beyond, |grad_output| * |s'(x) - limit| < 2^-149 for any float32 grad_output
_LN2_HI, _LN2_LO = 0.693145751953125, 1.4286067653e-06  # ln 2 = hi + lo, hi with 15 significant bits


def silu_prime_parts(x):
    """s'(x) as hi + lo (two float32s, or wider) times unscale^2, for float32 x
    (or wider): for every input its error is about that of e^-|x| itself (an
    ulp), with s' written so that nothing cancels or overflows (E = e^-|x|):

        x > 0:   s'(x) = (1 + E*(1 + x)) / (1 + E)^2
        x <= 0:  s'(x) = E*(1 + x + E) / (1 + E)^2

    ``1 + x + E`` vanishes at the root x0 = -1.27846...; within 0.5 of it the
    exact identity 1 + x + e^x = d + c*expm1(d), d = x - x0, c = e^x0, has two
    terms of one sign, so relative accuracy holds up to the root (x0 is carried
    as two float32s). Every other rounding is carried along as a low part
    (Knuth's TwoSum, products of half-length splits: no wider type needed),
    in forms that XLA's simplifier and FMA contraction leave exact. Below
    x = -64 E is scaled by 2^160 (unscale = 2^-80), so a large factor meets a
    normal-range s'(x). lo has hi's sign (or is 0), so an infinite factor gives
    an infinity. The limits: s'(inf) = 1, s'(-inf) = -0.0 (from below)."""
    x = wide_float(x)
    dtype = x.dtype

    def const(v):
        return jnp.asarray(v, dtype)

    zero = jnp.zeros_like(x)
    scaled = x < _SCALE_BELOW
    xc = jnp.clip(x, -_CLAMP, _CLAMP)
    z = -jnp.abs(xc)
    e = _exp_scaled(z, scaled)
    e_den = jnp.where(scaled, zero, e)  # (1 + E)^2 is 1 there
    p = const(1) + xc  # exact for x <= -0.5
    # Near the root: 1 + x + E = d * P, d = x - x0 = t - lo (t = x - hi exact),
    # P = -x0 + c*q, q = expm1(d)/d - 1 by its Taylor series (|d| < 0.5).
    # g is taken as t*P - lo*P: XLA folds a chain of constant subtractions into
    # one rounded constant, which would lose lo; P needs d only roughly.
    t = x - const(_ROOT_HI)
    d = t - const(_ROOT_LO)
    near = jnp.abs(d) < 0.5
    q = zero
    for k in range(11, 1, -1):
        q = (q + const(1 / math.factorial(k))) * d
    big_p = const(-_ROOT_HI) + const(_ROOT_C) * q
    g_near = t * big_p - const(_ROOT_LO) * big_p
    # Elsewhere 1 + x + E with its rounding error; 1 + E likewise.
    a, a_err = _two_sum(p, e_den)
    a = jnp.where(near, g_near, a)
    a_err = jnp.where(near, zero, a_err)
    u, u_err = _one_plus(e_den)
    # The numerator: 1 + E*(1 + x) for x > 0, E*a for x <= 0, each as hi + lo.
    pos = x > 0
    ep, ep_lo = _product(e, p)
    num_pos, num_pos_lo = _one_plus(ep)
    ea, ea_lo = _product(e, a)
    num = jnp.where(pos, num_pos, ea)
    num_lo = jnp.where(pos, num_pos_lo + ep_lo, ea_lo + e * a_err)
    den, den_lo = _product(u, u)
    den_lo = den_lo + const(2) * u * u_err
    # Both renormalised (hi parts rounded), then (num + num_lo) / (den + den_lo)
    # as hi + lo: hi rounded, lo from the exact remainder.
    num, num_lo = _two_sum(num, num_lo)
    den, den_lo = _two_sum(den, den_lo)
    hi = num / den
    prod, prod_lo = _product(hi, den)
    lo = (((num - prod) - prod_lo) + num_lo - hi * den_lo) / den
    # Renormalised (|lo| <= half an ulp of hi), then lo takes hi's sign: hi one
    # ulp nearer zero where they differ.
    hi, lo = _two_sum(hi, lo)
    flip = (lo != 0) & (jnp.signbit(lo) != jnp.signbit(hi)) & (hi != 0)
    nearer = jnp.nextafter(hi, zero)
    lo = jnp.where(flip, lo + (hi - nearer), lo)
    hi = jnp.where(flip, nearer, hi)
    # s'(x) < 0 below the root however small: an underflowed (or, as XLA's CPU
    # code does, flushed) s'(x) keeps that sign, as x = -inf's limit -0 does.
    hi = jnp.where((hi == 0) & (x < const(_ROOT_HI)), const(-0.0), hi)
    hi = jnp.where(x == jnp.inf, const(1), hi)
    lo = jnp.where(jnp.isinf(x), zero, lo)
    return hi, lo, jnp.where(scaled, const(_UNSCALE), const(1))


def times_silu_prime(g, x):
    """g * s'(x) in float32 (or wider), linear in g (so it transposes to
    ct * s'(x) computed alike): two products and a sum beyond s'(x)'s own error."""
    g = wide_float(g)
    hi, lo, unscale = silu_prime_parts(x)
    gu = g * unscale
    out = jnp.where(lo == 0, gu * hi, gu * hi + gu * lo)
    return out * unscale


def _two_sum(a, b):
    """a + b rounded, and its rounding error (Knuth's TwoSum, exact in IEEE arithmetic)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _exp_scaled(z, scaled):
    """e^z, times 2^160 where ``scaled`` (z <= -64, where e^z is subnormal or
    less), by Cody-Waite reduction: z - n ln2 is exact in its high part."""
    const = functools.partial(jnp.asarray, dtype=z.dtype)
    n = jnp.round(z * const(1.4426950408889634))
    r = (z - n * const(_LN2_HI)) - n * const(_LN2_LO)
    e_scaled = jnp.ldexp(jnp.exp(r), (n + _SCALE_BITS).astype(jnp.int32))
    return jnp.where(scaled, e_scaled, jnp.exp(z))


def _one_plus(b):
    """1 + b as hi + lo for 0 <= b <= 1, with hi = 1 + b cut to a multiple of
    2^-23 (so exact) and lo = the rest of b (exact). TwoSum does not survive
    here: XLA folds (1 + b) - 1 into b when one addend is a constant."""
    scale = jnp.asarray(2.0**23, b.dtype)
    b_hi = jnp.floor(b * scale) / scale
    return 1 + b_hi, b - b_hi


def _split(a):
    """a = hi + lo, hi a with the low half of its significand cleared, so that
    products of halves are exact."""
    bits, mask = (jnp.int32, -(1 << 12)) if a.dtype == jnp.float32 else (jnp.int64, -(1 << 27))
    hi = jax.lax.bitcast_convert_type(jax.lax.bitcast_convert_type(a, bits) & mask, a.dtype)
    return hi, a - hi


def _product(a, b):
    """a*b as hi + lo: hi the exact product of the high halves, lo the rest
    (rounded only far below hi's last bit). Every product is exact, so the
    result holds whether or not the compiler contracts a multiply and an add
    into an FMA, which breaks the usual form a*b - round(a*b)."""
    ah, al = _split(a)
    bh, bl = _split(b)
    return ah * bh, (ah * bl + al * bh) + al * bl



def _silu_second(x):
    """s''(x) = sigma(x) * (1 - sigma(x)) * (2 + x * (1 - 2 sigma(x))), in float32
    (or wider). It is even; with a = |x| and E = e^-a it reads

        s''(x) = E * (2 (1 + E) - a (1 - E)) / (1 + E)^3,

    1 - E from expm1: nothing overflows or loses relative accuracy except
    next to its roots |x| = 2.39936..., where the bracket cancels."""
    a = jnp.minimum(jnp.abs(wide_float(x)), _CLAMP)  # e^-250 * 2^160 is 0: the limits 0 at +-inf
    scaled = a > -_SCALE_BELOW  # E (scaled) as in silu_prime_parts, and 1 + E = 1 there
    e = _exp_scaled(-a, scaled)
    one_e = 1 + jnp.where(scaled, jnp.zeros_like(e), e)
    unscale = jnp.where(scaled, jnp.asarray(_UNSCALE, a.dtype), jnp.asarray(1, a.dtype))
    out = e * (2 * one_e + a * jnp.expm1(-a)) / (one_e * one_e * one_e)
    return out * unscale * unscale


def _silu_third(x):
    """The third derivative, s'''(x) = sigma' ((1 - 2 sigma) (3 + x (1 - 2 sigma)) - 2 x sigma'),
    sigma' = sigma (1 - sigma); 0 at +-inf. The JVP rule of s'' evaluates it
    under the outer transformation, so it is written in lax, whose operations
    are primitives (differentiable again), not in jnp, whose jitted functions
    enter a debug_nans(False) context there (op.py)."""
    v = wide_float(x)
    zero, one, two = (lax.full_like(v, c) for c in (0, 1, 2))
    # +-inf, without an infinite constant (which jax_debug_infs would report).
    inf = lax.bitwise_and(lax.bitwise_not(lax.is_finite(v)), lax.eq(v, v))
    safe = lax.select(inf, zero, v)
    sig = lax.logistic(safe)
    d1 = lax.mul(sig, lax.sub(one, sig))
    m = lax.sub(one, lax.mul(two, sig))
    inner = lax.sub(lax.mul(m, lax.add(lax.full_like(v, 3), lax.mul(safe, m))), lax.mul(two, lax.mul(safe, d1)))
    return lax.select(inf, zero, lax.mul(d1, inner))


def _wide_dtype(dtype):
    return dtype if jnp.finfo(dtype).bits >= 32 else jnp.dtype(jnp.float32)


# The error-free arithmetic of s'' (rounding, bit masks, scaling) has no
# useful derivative of its own: the next one is written out in lax
# (_silu_third).
silu_second_p = elementwise_primitive(
    "jax_ascend_silu_silu_second", __name__, "silu_second_p", _silu_second,
    lambda t, x: lax.mul(_silu_third(x), wide_float(t)), out_dtype=_wide_dtype)


def silu_second(x):
    """s''(x) in float32 (or wider), differentiable to any order."""
    return silu_second_p.bind(x)


# ------------------------------------------------------------------ SwiGLU --
# silu(a) * b and its derivatives in float32 (or wider), each result rounded
# once to a's dtype: the jnp lowerings of swiglu.py's primitives.


def silu_wide(a):
    """silu(a) in float32 (or wider), with its limit -0 at a = -inf (where
    ``a * sigmoid(a)`` is NaN), as the kernel gives it."""
    a = wide_float(a)
    return jnp.where(a == -jnp.inf, jnp.full_like(a, -0.0), jax.nn.silu(a))


def swiglu_value(a, b):
    """silu(a) * b."""
    return (silu_wide(a) * wide_float(b)).astype(a.dtype)


def swiglu_tangent(a_dot, b_dot, a, b):
    """b * s'(a) * a_dot + silu(a) * b_dot."""
    out = times_silu_prime(wide_float(a_dot) * wide_float(b), a) + silu_wide(a) * wide_float(b_dot)
    return out.astype(a.dtype)


def swiglu_grads(g, a, b):
    """SwiGluGrad: (dA, dB) = (g * B * s'(A), g * silu(A))."""
    g = wide_float(g)
    return times_silu_prime(g * wide_float(b), a).astype(a.dtype), (g * silu_wide(a)).astype(a.dtype)


def times_silu_second(a, *factors):
    """The product of ``factors`` and s''(a), rounded once to a's dtype."""
    out = silu_second(a)
    for f in factors:
        out = lax.mul(out, wide_float(f))
    return out.astype(a.dtype)
