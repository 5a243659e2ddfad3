// The SiluGrad arithmetic, written once over a vector-ops type V (see
// simd_scalar.h, simd_avx2.h, simd_avx512.h). Every ISA executes the same
// sequence of IEEE operations (fused multiply-adds included), so results are
// bitwise identical across ISAs, thread counts and tilings. Compile with
// -ffp-contract=off so the compiler adds no fusions of its own.
//
// With E = exp(-|x|) in (0, 1] (never overflows):
//   x > 0:  s'(x) = (1 + E*(1 + x)) / (1 + E)^2
//   x <= 0: s'(x) = E*(1 + x + E) / (1 + E)^2
// which is sigma*(1 + x*(1 - sigma)) rearranged so that no term can overflow.
// 1 + x + E cancels at x0 = -1 - W(1/e) = -1.27846..., where s'(x) = 0. Near
// it we use the exact identity 1 + x + e^x = d + c*expm1(d), d = x - x0,
// c = e^x0 = -1 - x0, whose two terms share d's sign: no cancellation, and
// relative accuracy holds right up to the root.
//
// For x < -64, E would fall into float32's subnormal range (x < -87) and lose
// bits that a large grad_output makes visible (3e38 * s'(-150) is a normal
// float), so E is carried scaled by 2^160 and the scale is applied where the
// result itself is small. Below x = -250 even 3.4e38 * s'(x) rounds to 0.
//
// Two paths, chosen per lane: the general one (SiluParts, GradFloat,
// GradDouble) takes any input; the fast one (GradF32Fast, GradHalf, at the
// end) covers |x| <= 32 with a finite grad_output, nearly every input in
// practice, with no clamping or scaling and no double arithmetic. A vector
// runs the general path only when one of its lanes needs it.
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_MATH_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_MATH_H_

#include <cstdint>

#include "common/host_device.h"  // the formulas also compile for the GPU (simd_cuda.cuh)

namespace jas::math {

// x0 as a float32 pair (hi + lo), and c = -1 - x0 = e^x0.
inline constexpr float kRootHi = -0x1.474974p+0f;   // -1.2784646
inline constexpr float kRootLo = 0x1.bdf6fap-27f;   //  1.2979283e-08
inline constexpr float kC = 0x1.1d25d0p-2f;         // 0.27846456
// Window around the root where the expansion is used (|d| < kRootWindow).
inline constexpr float kRootWindow = 0.5f;
// Beyond |x| = 250, the result no longer depends on x; unscaled, exp(-|x|)
// is 0 in float32 beyond 120.
inline constexpr float kClamp = 250.0f;
inline constexpr float kExpClamp = 120.0f;
// Below x = kScaleBelow, E is carried as E * 2^kScaleBits (see above), and
// undone by multiplying twice by kUnscale (2^-160 is no float32).
inline constexpr float kScaleBelow = -64.0f;
inline constexpr float kScaleBits = 160.0f;
inline constexpr float kUnscale = 0x1p-80f;

// exp(z) * 2^bias for z = -|x| in [-kClamp, 0] (NaN passes through) and
// bias 0 or kScaleBits: Cody-Waite reduction z = n*ln2 + r, |r| <= ln2/2,
// Taylor polynomial to degree 7 (truncation below 0.1 ulp), then scaling by
// 2^(n + bias) in two halves so results in the subnormal range come out right.
// The caller keeps n + bias in [-201, 68].
template <class V>
JAS_HOST_DEVICE inline typename V::F ExpNonPositive(typename V::F z, typename V::F bias) {
  using F = typename V::F;
  const F n = V::Round(V::Mul(z, V::Set(0x1.715476p+0f)));  // z * log2(e)
  F r = V::Fma(n, V::Set(-0x1.62e400p-1f), z);             // ln2 high part (exact product)
  r = V::Fma(n, V::Set(-0x1.7f7d1cp-20f), r);              // ln2 low part
  F p = V::Set(1.0f / 5040.0f);
  p = V::Fma(p, r, V::Set(1.0f / 720.0f));
  p = V::Fma(p, r, V::Set(1.0f / 120.0f));
  p = V::Fma(p, r, V::Set(1.0f / 24.0f));
  p = V::Fma(p, r, V::Set(1.0f / 6.0f));
  p = V::Fma(p, r, V::Set(0.5f));
  p = V::Fma(p, r, V::Set(1.0f));
  p = V::Fma(p, r, V::Set(1.0f));
  return V::ScaleByPow2(p, V::Add(n, bias));
}

// g = 1 + x + E, replaced near the root (|x - x0| < kRootWindow) by
// g = (t - lo) * P with t = x - hi exact, P = (1 + c) + c*q,
// q = expm1(d)/d - 1, and 1 + c = -x0 = -(hi + lo) carried as two floats.
template <class V>
JAS_HOST_DEVICE inline typename V::F NearRoot(typename V::F x, typename V::F g) {
  using F = typename V::F;
  const F t = V::Sub(x, V::Set(kRootHi));
  const F d = V::Sub(t, V::Set(kRootLo));
  const auto near = V::Lt(V::Abs(d), V::Set(kRootWindow));
  if (!V::Any(near)) return g;
  // q = d * Q(d), Q minimax on |d| < 0.5 (adds under 0.05 * 2^-24 to P).
  F q = V::Set(0x1.a34974p-13f);
  q = V::Fma(q, d, V::Set(0x1.6efa34p-10f));
  q = V::Fma(q, d, V::Set(0x1.110edep-7f));
  q = V::Fma(q, d, V::Set(0x1.555268p-5f));
  q = V::Fma(q, d, V::Set(0x1.555558p-3f));
  q = V::Fma(q, d, V::Set(0x1.000002p-1f));
  q = V::Mul(q, d);
  const F big_p = V::Add(V::Fma(V::Set(kC), q, V::Set(-kRootLo)), V::Set(-kRootHi));
  const F g_near = V::Fms(t, big_p, V::Mul(V::Set(kRootLo), big_p));
  return V::Select(near, g_near, g);
}

// s'(x) = scale^2 * (e*a + b) / (1 + e_den)^2, every piece a float32:
//   x > 0:  e*(1 + x) + 1;   x <= 0: e*g + 0,  g = 1 + x + E
// e is E, times 2^160 below kScaleBelow (then scale = 2^-80 and e_den = 0,
// since (1 + E)^2 rounds to 1 there in float and in double alike).
// den is (1 + E)^2 in float32, for the float32 path and the reciprocal seed.
template <class V>
struct Parts {
  typename V::F e, e_den, a, b, den, scale;
};

template <class V>
JAS_HOST_DEVICE inline Parts<V> SiluParts(typename V::F x) {
  using F = typename V::F;
  const F one = V::Set(1.0f), zero = V::Set(0.0f);
  const auto scaled = V::Lt(x, V::Set(kScaleBelow));
  // NaN-preserving clamps: V::Min/V::Max return their second operand's NaN.
  const F limit = V::Select(scaled, V::Set(kClamp), V::Set(kExpClamp));
  F e = ExpNonPositive<V>(V::Neg(V::Min(limit, V::Abs(x))),
                                V::Select(scaled, V::Set(kScaleBits), zero));
  // s'(x) < 0 for every finite x < x0, however tiny: keep E nonzero there (it
  // only matters for an infinite grad_output), and exactly 0 at x = -inf.
  e = V::Select(scaled, V::Max(V::Set(0x1p-149f), e), e);
  e = V::Select(V::Eq(x, V::Set(-__builtin_inff())), zero, e);
  const F e_den = V::Select(scaled, zero, e);
  const F xc = V::Max(V::Set(-kClamp), V::Min(V::Set(kClamp), x));
  const F p = V::Add(one, xc);  // exact for x in [-2, -0.5], the region that cancels
  F g = V::Add(p, e_den);       // 1 + x + E
  g = NearRoot<V>(x, g);
  const auto pos = V::Gt(x, zero);
  const F den = V::Fma(e_den, V::Add(e_den, V::Set(2.0f)), one);  // (1 + E)^2
  return {e, e_den, V::Select(pos, p, g), V::Select(pos, one, zero), den,
          V::Select(scaled, V::Set(kUnscale), one)};
}

// General path: grad_output * s'(x) in float32 arithmetic, for the half
// types (whose one final rounding swamps float32's few-ulp error). The order keeps every
// intermediate in float32's normal range whenever the result needs it to.
template <class V>
JAS_HOST_DEVICE inline typename V::F GradFloat(typename V::F go, typename V::F x) {
  const Parts<V> s = SiluParts<V>(x);
  const typename V::F ds = V::Div(V::Fma(s.e, s.a, s.b), s.den);
  return V::Mul(V::Mul(V::Mul(go, s.scale), ds), s.scale);
}

// General path: grad_output * s'(x) finished in double, for float32 results
// and the precomputed s'(x) of a broadcast x: the pieces come
// from float32, the combination runs in double and is rounded once, keeping
// the total error within a few ulp. The division is a float32 reciprocal
// refined by one Newton step in double (relative error ~2^-44), identical on
// every ISA. Writes V::kHalves double vectors.
template <class V>
JAS_HOST_DEVICE inline void GradDouble(typename V::F go, typename V::F x, typename V::D* out) {
  using D = typename V::D;
  const Parts<V> s = SiluParts<V>(x);
  const typename V::F y0 = V::Div(V::Set(1.0f), s.den);
  const D one = V::SetD(1.0);
  for (int h = 0; h < V::kHalves; ++h) {
    const D num = V::FmaD(V::Widen(s.e, h), V::Widen(s.a, h), V::Widen(s.b, h));
    const D t = V::AddD(one, V::Widen(s.e_den, h));
    const D den = V::MulD(t, t);
    const D y = V::Widen(y0, h);
    const D inv = V::FmaD(y, V::FmaD(V::NegD(den), y, one), y);
    const D scale = V::Widen(s.scale, h);
    out[h] = V::MulD(V::MulD(V::MulD(V::MulD(V::Widen(go, h), num), inv), scale), scale);
  }
}


// ---- The fast path: |x| <= kFastLimit and a finite grad_output ----------
// There E = exp(-|x|) >= e^-32 and every intermediate stays a normal float32,
// so no clamping or scaling is needed. Lanes outside it take the general
// path above; the choice is made per lane, so results do not depend on which
// other lanes share a vector (nor on the ISA's vector width).
inline constexpr float kFastLimit = 32.0f;

// -ax = n*ln2 + r with n integral and |r| <= ln2/2 (the reduction of
// ExpNonPositive, n rounded by adding 1.5 * 2^23 instead of an instruction).
template <class V>
struct Reduced {
  typename V::F n, r;
};

template <class V>
JAS_HOST_DEVICE inline Reduced<V> ReduceNegative(typename V::F ax) {
  using F = typename V::F;
  const F shifter = V::Set(0x1.8p23f);
  const F n = V::Sub(V::Fnma(ax, V::Set(0x1.715476p+0f), shifter), shifter);  // -ax*log2(e)
  const F r = V::Fnms(n, V::Set(0x1.62e400p-1f), ax);                       // -ax - n*ln2
  return {n, V::Fnma(n, V::Set(0x1.7f7d1cp-20f), r)};
}

// Q(r) with e^r = 1 + r*Q(r), minimax for |r| <= 0.5 (the reduced range and
// the root window): relative error 0.04 * 2^-24 for e^r, 0.1 * 2^-24 for
// e^r - 1 = r*Q(r).
template <class V>
JAS_HOST_DEVICE inline typename V::F ExpQ(typename V::F r) {
  using F = typename V::F;
  F q = V::Set(0x1.9dba42p-13f);
  q = V::Fma(q, r, V::Set(0x1.6f145ep-10f));
  q = V::Fma(q, r, V::Set(0x1.111734p-7f));
  q = V::Fma(q, r, V::Set(0x1.55521ep-5f));
  q = V::Fma(q, r, V::Set(0x1.55554cp-3f));
  q = V::Fma(q, r, V::Set(0x1.000002p-1f));
  return V::Fma(q, r, V::Set(1.0f));
}

// exp(-ax) for ax in [0, kFastLimit]; the final scaling is exact (both
// factors are normal).
template <class V>
JAS_HOST_DEVICE inline typename V::F ExpFast(typename V::F ax) {
  const Reduced<V> red = ReduceNegative<V>(ax);
  return V::Ldexp(V::Fma(red.r, ExpQ<V>(red.r), V::Set(1.0f)), red.n);
}

// E = exp(-|x|) and g = 1 + x + E on the fast path, with one polynomial. In
// the root window (|d| < kRootWindow, d = x - x0) the exponential is taken
// around x0 instead of a multiple of ln2: E = c*e^d, c = e^x0, and
// g = d + c*(e^d - 1), two terms of d's sign (see the top of this file).
template <class V>
struct ExpAndRoot {
  typename V::F e, g;
};

template <class V>
JAS_HOST_DEVICE inline ExpAndRoot<V> ExpFastWithRoot(typename V::F x, typename V::F ax) {
  using F = typename V::F;
  const F one = V::Set(1.0f);
  const Reduced<V> red = ReduceNegative<V>(ax);
  const F t = V::Sub(x, V::Set(kRootHi));  // exact
  const F d = V::Sub(t, V::Set(kRootLo));
  const auto near = V::Lt(V::Abs(d), V::Set(kRootWindow));
  const F r = V::Select(near, d, red.r);
  const F q = ExpQ<V>(r);
  const F em1 = V::Mul(r, q);  // e^r - 1
  // c = kC - lo (exactly, to this precision), so near the root
  // w = c*(e^d - 1) + kC - c = kC*(e^d - 1) - lo*e^d,  E = kC + w,  g = t + w.
  const F w = V::Fms(V::Set(kC), em1, V::Fma(V::Set(kRootLo), em1, V::Set(kRootLo)));
  const F e = V::Select(near, V::Add(V::Set(kC), w), V::Ldexp(V::Fma(r, q, one), red.n));
  const F g_near = V::Add(t, w);
  return {e, V::Select(near, g_near, V::Add(V::Add(one, x), e))};
}

// grad_output * s'(x) on the fast path, in float32 arithmetic whose rounding
// errors are carried along (error-free products and sums) instead of
// finishing in double. With sigma = 1/(1 + E), held as y + yl:
//   x > 0:  s'(x) = sigma + x*E*sigma^2
//   x <= 0: s'(x) = (E*sigma) * (g*sigma),  g = 1 + x + E (ExpFastWithRoot)
// and the last operation, an FMA, is the only rounding not compensated.
template <class V>
JAS_HOST_DEVICE inline typename V::F GradF32Fast(typename V::F go, typename V::F x) {
  using F = typename V::F;
  const F one = V::Set(1.0f);
  const ExpAndRoot<V> eg = ExpFastWithRoot<V>(x, V::Abs(x));
  const F e = eg.e, g = eg.g;
  const F y = V::Div(one, V::Add(one, e));
  // sigma - y = sigma * (1 - y*(1 + E)); 1 - y is exact (y in [1/2, 1]).
  const F yl = V::Mul(y, V::Fnma(y, e, V::Sub(one, y)));
  const F m1 = V::Mul(e, y);                // E*sigma = m1 + m1l
  const F m1l = V::Fma(e, yl, V::Fms(e, y, m1));
  // x <= 0
  const F m2 = V::Mul(g, y);                // g*sigma = m2 + m2l
  const F m2l = V::Fma(g, yl, V::Fms(g, y, m2));
  const F s = V::Mul(m1, m2);
  const F sl = V::Fma(m1, m2l, V::Fma(m1l, m2, V::Fms(m1, m2, s)));
  // x > 0: sigma + x*E*sigma^2 = y + (yl + (x*m1)*y)
  const F small = V::Fma(V::Mul(x, m1), y, yl);
  const auto pos = V::Gt(x, V::Set(0.0f));
  const F hi = V::Select(pos, y, s), lo = V::Select(pos, small, sl);
  return V::Fma(go, hi, V::Mul(go, lo));
}

// Which NaN an operation returns when several meet depends on operand order,
// which compilers pick freely: NaN results are given one bit pattern.
template <class V>
JAS_HOST_DEVICE inline typename V::F CanonicalNan(typename V::F r) {
  return V::Select(V::IsNan(r), V::Set(__builtin_nanf("")), r);
}

// Lanes for the general path: |x| > kFastLimit, NaN x, and a NaN or
// infinite grad_output (which turns grad_output*0 + |x| into NaN).
template <class V>
JAS_HOST_DEVICE inline typename V::M NeedsGeneralPath(typename V::F go, typename V::F x) {
  return V::Nle(V::Fma(go, V::Set(0.0f), V::Abs(x)), V::Set(kFastLimit));
}

// grad_output * s'(x) for float32 results.
template <class V>
JAS_HOST_DEVICE inline typename V::F GradF32(typename V::F go, typename V::F x) {
  const typename V::F fast = GradF32Fast<V>(go, x);
  const auto general = NeedsGeneralPath<V>(go, x);
  if (!V::Any(general)) return fast;
  typename V::D d[V::kHalves];
  GradDouble<V>(go, x, d);
  return V::Select(general, CanonicalNan<V>(V::Narrow(d)), fast);
}

// grad_output * s'(x) for the half types, whose single rounding to 8 or 11
// bits swamps a few float32 ulp: plain float32 arithmetic on the fast path,
// without NearRoot. Half inputs stay away from the root (|x - x0| > 1.4e-4
// for float16, 2.8e-3 for bfloat16), so the cancellation in 1 + x + E
// costs at most 2^-12.4 relative: under 0.4 ulp of float16 on top of the
// final rounding's 0.5 (the float16 worst case measured over every input is
// 0.5002 ulp).
template <class V>
JAS_HOST_DEVICE inline typename V::F GradHalf(typename V::F go, typename V::F x) {
  using F = typename V::F;
  const F one = V::Set(1.0f);
  const F e = ExpFast<V>(V::Abs(x));
  const F p = V::Add(one, x);
  const F g = V::Add(p, e);
  const F num = V::Select(V::Gt(x, V::Set(0.0f)), V::Fma(e, p, one), V::Mul(e, g));
  const F den = V::Fma(e, V::Add(e, V::Set(2.0f)), one);  // (1 + E)^2
  const F fast = V::Mul(go, V::Div(num, den));
  const auto general = NeedsGeneralPath<V>(go, x);
  if (!V::Any(general)) return fast;
  return V::Select(general, CanonicalNan<V>(GradFloat<V>(go, x)), fast);
}

}  // namespace jas::math

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_MATH_H_
