// The SiluGrad arithmetic, written once over a vector-ops type V (see
// simd_scalar.h, simd_avx2.h, simd_avx512.h). Every ISA executes the same
// sequence of IEEE operations (fused multiply-adds included), so results are
// bitwise identical across ISAs, thread counts and tilings. Compile with
// -ffp-contract=off so the compiler adds no fusions of its own.
//
// The general path (SiluParts, GradFloat, GradDouble) takes any input.
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
// The fast path (GradF32, GradHalf, at the end; a different formula, see
// there) covers x >= kFastLow with a finite grad_output, nearly every input
// in practice. The choice is made per lane, so results do not depend on which
// other lanes share a vector (nor on the ISA's vector width); a vector runs
// the general path only when one of its lanes needs it.
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
JAS_HOST_DEVICE inline typename V::F RootExpansion(typename V::F x, typename V::F g) {
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
//   x > 0:  e*(1 + x) + 1;   x <= 0: e*g - 0,  g = 1 + x + E
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
  g = RootExpansion<V>(x, g);
  const auto pos = V::Gt(x, zero);
  const F den = V::Fma(e_den, V::Add(e_den, V::Set(2.0f)), one);  // (1 + E)^2
  // b = -0 for x <= 0: E*g + b keeps E*g's sign when it is zero, so x = -inf
  // (E = 0) gives s' = -0, the limit from below, as x = -1e38 does.
  return {e, e_den, V::Select(pos, p, g), V::Select(pos, one, V::Set(-0.0f)), den,
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


// ---- The fast path: x >= kFastLow and a finite grad_output -------------
// One formula for both signs, with E = e^x and A = 1 + x + E:
//   s'(x) = E*A / (1 + E)^2.
// E comes from a 32-entry table and a short polynomial:
//   x = k*ln2/32 + r',  k = 32m + j,  e^x = 2^m * T_j * e^(r' - delta_j)
// where T_j is 2^(j/32) rounded to float32 and delta_j = ln(T_j) - j*ln2/32
// (a per-slot correction, so the table entries carry no rounding error).
// With Ts = 2^m * T_j (exact) and em1 = e^r - 1 (|r| <= 0.0109):
//   E = Ts + Ts*em1,   A = ((1 + x) + Ts) + Ts*em1.
// Near the root x0 (s'(x0) = 0) both (1 + x) and (1 + x) + Ts are exact
// (Sterbenz), so A keeps its relative accuracy while it cancels, down to
// |A| ~ 3e-3; closer still (|x - x0| < kNearRoot) A comes from the
// expansion A = d*(-x0 + c*d*R(d)), d = x - x0, c = e^x0.
// The quotient carries the rounding errors of E*A, 1 + E, its square and the
// division as low parts (error-free products and sums), so the last FMA with
// grad_output is the only rounding not compensated. Every float32 input is
// checked against this by benchmarks/exhaustive_accuracy.cc.
// Below kFastLow the low parts of E*A and of the quotient would become
// subnormal (costly on x86, see TinyGrad), and s'(x) < 2^-42.6 there.
inline constexpr float kFastLow = -33.0f;
inline constexpr float kFastHigh = 24.0f;   // from here on grad_output * s'(x) rounds to grad_output
inline constexpr float kNearRoot = 0x1p-9f;  // |x - x0| below which the root expansion is used

// T_j = 2^(j/32) rounded to float32, stored with j*2^18 taken off its bits:
// V::AddExponent adds k*2^18 = m*2^23 + j*2^18 back, which also puts m in
// the exponent field.
JAS_TABLE float kExpTable[32] = {
    0x1.000000p+0f, 0x1.fd9b0ep-1f, 0x1.fb5586p-1f, 0x1.f9301ep-1f, 0x1.f72b84p-1f, 0x1.f54874p-1f,
    0x1.f387a6p-1f, 0x1.f1e9e0p-1f, 0x1.f06fe0p-1f, 0x1.ef1a74p-1f, 0x1.edea64p-1f, 0x1.ece086p-1f,
    0x1.ebfdaep-1f, 0x1.eb42b6p-1f, 0x1.eab07ep-1f, 0x1.ea47ecp-1f, 0x1.ea09e6p-1f, 0x1.e9f75ep-1f,
    0x1.ea1148p-1f, 0x1.ea589ap-1f, 0x1.eace54p-1f, 0x1.eb737cp-1f, 0x1.ec4918p-1f, 0x1.ed503cp-1f,
    0x1.ee89fap-1f, 0x1.eff770p-1f, 0x1.f199bep-1f, 0x1.f3720ep-1f, 0x1.f5818ep-1f, 0x1.f7c974p-1f,
    0x1.fa4afap-1f, 0x1.fd0766p-1f};
// delta_j = ln(T_j) - j*ln2/32.
JAS_TABLE float kExpTableDelta[32] = {
    0x0.0p+0f,        0x1.947416p-25f,  -0x1.8d96d4p-25f, 0x1.dda2fep-25f,  0x1.9c0c22p-27f,  0x1.a2fbb4p-25f,
    -0x1.964902p-25f, 0x1.2b0dbcp-25f,  -0x1.125002p-25f, 0x1.cde8cep-26f,  -0x1.370be4p-25f, -0x1.336de2p-30f,
    0x1.0a3552p-25f,  0x1.c541b6p-26f,  0x1.00d8acp-27f,  0x1.6cb284p-25f,  -0x1.26055cp-26f, -0x1.8b2bb8p-26f,
    0x1.05cb44p-25f,  0x1.1c2142p-26f,  -0x1.67a1cap-28f, 0x1.348e56p-25f,  -0x1.a3b5e4p-28f, 0x1.0b7ec8p-25f,
    0x1.f9c306p-27f,  0x1.e4c886p-26f,  0x1.6961b4p-28f,  0x1.b5151ep-28f,  0x1.a5217cp-28f,  0x1.ab7132p-26f,
    -0x1.61428ep-28f, 0x1.2ad5f8p-27f};

// E = e^x and A = 1 + x + E for x in [kFastLow, kFastHigh] (other lanes get
// values that the callers discard).
template <class V>
struct ExpAndA {
  typename V::F e, a;
};

template <class V>
JAS_HOST_DEVICE inline ExpAndA<V> ExpAndOnePlusXPlusExp(typename V::F x) {
  using F = typename V::F;
  const F shifter = V::Set(0x1.8p23f);
  // k = round(32x/ln2) in kf's low bits; V::Lookup32 and V::AddExponent read
  // j = k mod 32 and m = k div 32 from there.
  const F kf = V::Fma(x, V::Set(0x1.715476p+5f), shifter);
  const F k = V::Sub(kf, shifter);
  const F r1 = V::Fnma(k, V::Set(0x1.62e430p-6f), x);  // exact: ln2/32's high part has 20 bits
  // r = r1 - (k*ln2_lo + delta_j), rounded once.
  const F r = V::Sub(r1, V::Fma(k, V::Set(-0x1.05c610p-34f), V::Lookup32(kExpTableDelta, kf)));
  // e^r - 1 = r + r^2*(c0 + c1*r), minimax for |r| <= 0.011: error 2^-33.
  const F em1 = V::Fma(V::Mul(r, r), V::Fma(r, V::Set(0x1.5555d2p-3f), V::Set(0x1.00008cp-1f)), r);
  const F ts = V::AddExponent(V::Lookup32(kExpTable, kf), kf);
  const F one_plus_x = V::Add(V::Set(1.0f), x);
  return {V::Fma(ts, em1, ts), V::Fma(ts, em1, V::Add(one_plus_x, ts))};
}

// Lanes near the root, where A comes from NearRootA.
template <class V>
JAS_HOST_DEVICE inline typename V::M NearRootLanes(typename V::F x) {
  return V::Lt(V::Abs(V::Sub(x, V::Set(kRootHi))), V::Set(kNearRoot));
}

// A near the root, |x - x0| < kNearRoot: with t = x - hi (exact) and
// d = t - lo, A = d*B, B = -x0 + c*d*R(d) = -hi + b, b = c*d*R(d) - lo,
// R(d) = (e^d - 1 - d)/d^2 ~ 1/2 + d/6. A = t*(-hi) + (t*b - lo*B) keeps
// the big product exact inside the last FMA.
template <class V>
JAS_HOST_DEVICE inline typename V::F NearRootA(typename V::F x) {
  using F = typename V::F;
  const F t = V::Sub(x, V::Set(kRootHi));
  const F d = V::Sub(t, V::Set(kRootLo));
  const F b = V::Fma(V::Mul(V::Set(kC), d), V::Fma(d, V::Set(1.0f / 6.0f), V::Set(0.5f)), V::Set(-kRootLo));
  const F big_b = V::Sub(b, V::Set(kRootHi));
  return V::Fma(t, V::Set(-kRootHi), V::Fms(t, b, V::Mul(V::Set(kRootLo), big_b)));
}

// s'(x) as hi + lo on the fast path, |lo| below 2^-8 |hi|.
template <class V>
struct Split {
  typename V::F hi, lo;
};

template <class V>
JAS_HOST_DEVICE inline Split<V> QuotientF32(typename V::F e, typename V::F a) {
  using F = typename V::F;
  const F one = V::Set(1.0f);
  // 1 + E = s + sl: exact while s < 2^24 (1 - s is then exact, and so is
  // the rounding error E - (s - 1)); above, off by at most half an ulp of s.
  const F s = V::Add(one, e);
  const F sl = V::Add(V::Sub(one, s), e);
  // (1 + E)^2 = dh + dl, to about twice float32's precision.
  const F dh = V::Mul(s, s);
  const F dl = V::Fma(V::Add(s, s), sl, V::Fms(s, s, dh));
  // E*A = mh + ml exactly.
  const F mh = V::Mul(e, a);
  const F ml = V::Fms(e, a, mh);
  // E*A/(1+E)^2 = q + rho/(dh + dl), rho = (mh - dh*q) + (ml - dl*q), the
  // first term exact by the FMA for any q this close to the quotient.
  const F y = V::Div(one, dh);
  const F q = V::Mul(mh, y);
  const F rho = V::Add(V::Fnma(dh, q, mh), V::Fnma(dl, q, ml));
  return {q, V::Mul(rho, y)};
}

// grad_output * (hi + lo), rounded once.
template <class V>
JAS_HOST_DEVICE inline typename V::F TimesGrad(typename V::F go, Split<V> ds) {
  return V::Fma(go, ds.hi, V::Mul(go, ds.lo));
}

// Subnormal floats: on x86 a float operation whose result or operand is
// subnormal (unless exact) takes a microcode assist of ~100 cycles, several
// times the cost of a whole vector of normal values (scaling such an
// operand by a power of two is no way out: that multiply is itself slow).
// Lanes with 0 < |grad_output| < kTinyGrad, where g*s'(x) or g*lo may be
// subnormal (s'(x) >= 2^-42.6 on the fast path, so other lanes' products
// stay above 2^-86), finish in double instead: float <-> double
// conversions take subnormals at full speed, and the conversion back is
// the one rounding, gradual underflow included.
inline constexpr float kTinyGrad = 0x1p-43f;

// Takes |grad_output|.
template <class V>
JAS_HOST_DEVICE inline typename V::M TinyGrad(typename V::F abs_go) {
  return V::And(V::Lt(abs_go, V::Set(kTinyGrad)), V::Gt(abs_go, V::Set(0.0f)));
}

// grad_output * (hi + lo), the tiny lanes in double.
template <class V>
JAS_HOST_DEVICE inline typename V::F TimesGradTiny(typename V::F go, Split<V> ds, typename V::M tiny) {
  typename V::D out[V::kHalves];
  for (int h = 0; h < V::kHalves; ++h) {
    const typename V::D g = V::Widen(go, h);
    out[h] = V::FmaD(g, V::Widen(ds.hi, h), V::MulD(g, V::Widen(ds.lo, h)));
  }
  return V::Select(tiny, V::Narrow(out), TimesGrad<V>(V::Select(tiny, V::Set(1.0f), go), ds));
}

// grad_output * ds for the half types' tiny lanes, finished in double:
// float <-> double conversions take subnormals at full speed, and the
// conversion back is the one rounding.
template <class V>
JAS_HOST_DEVICE inline typename V::F TimesGradDouble(typename V::F go, typename V::F ds) {
  typename V::D out[V::kHalves];
  for (int h = 0; h < V::kHalves; ++h) out[h] = V::MulD(V::Widen(go, h), V::Widen(ds, h));
  return V::Narrow(out);
}

// Which NaN an operation returns when several meet depends on operand order,
// which compilers pick freely: NaN results are given one bit pattern.
template <class V>
JAS_HOST_DEVICE inline typename V::F CanonicalNan(typename V::F r) {
  return V::Select(V::IsNan(r), V::Set(__builtin_nanf("")), r);
}

// |grad_output| above which g*s'(x) (s' < 1.1) can come near float32's
// overflow threshold: whether it rounds to the largest float or to inf then
// depends on s'(x) to far more than float32 precision, so such lanes take
// the general path, which computes s'(x) in double.
inline constexpr float kHugeGrad = 0x1p127f;

// Lanes for the general path: x < kFastLow or NaN (Nle is true for
// unordered operands), and |grad_output| > kHugeGrad, infinite or NaN.
// Takes |grad_output|.
template <class V>
JAS_HOST_DEVICE inline typename V::M NeedsGeneralPath(typename V::F abs_go, typename V::F x) {
  return V::Or(V::Nle(V::Set(kFastLow), x), V::Nle(abs_go, V::Set(kHugeGrad)));
}

// The vectors with a lane near the root, with a tiny grad_output or off the
// fast path (rare in practice, every vector for subnormal gradients).
template <class V>
JAS_HOST_DEVICE JAS_NOINLINE typename V::F GradF32Rare(typename V::F go, typename V::F x, typename V::M general,
                                                       typename V::M tiny) {
  using F = typename V::F;
  // Clamped so that lanes off the fast path compute (discarded) ordinary numbers.
  const F xc = V::Max(V::Min(x, V::Set(kFastHigh)), V::Set(kFastLow));
  const ExpAndA<V> ea = ExpAndOnePlusXPlusExp<V>(xc);
  const F a = V::Select(NearRootLanes<V>(x), NearRootA<V>(x), ea.a);
  const Split<V> ds = QuotientF32<V>(ea.e, a);
  F r = V::Any(tiny) ? TimesGradTiny<V>(go, ds, tiny) : TimesGrad<V>(go, ds);
  r = V::Select(V::Lt(x, V::Set(kFastHigh)), r, go);
  if (!V::Any(general)) return r;
  typename V::D d[V::kHalves];
  GradDouble<V>(go, x, d);
  return V::Select(general, CanonicalNan<V>(V::Narrow(d)), r);
}

// grad_output * s'(x) for float32 results; x >= kFastHigh (+inf included)
// gives grad_output exactly.
template <class V>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE typename V::F GradF32(typename V::F go, typename V::F x) {
  using F = typename V::F;
  const F abs_go = V::Abs(go);
  const auto general = NeedsGeneralPath<V>(abs_go, x);
  const auto near = NearRootLanes<V>(x);
  if (V::Any(V::Or(general, near))) return GradF32Rare<V>(go, x, general, TinyGrad<V>(abs_go));
  const ExpAndA<V> ea = ExpAndOnePlusXPlusExp<V>(x);
  const Split<V> ds = QuotientF32<V>(ea.e, ea.a);
  const auto tiny = TinyGrad<V>(abs_go);
  // Inline: with subnormal gradients every vector comes here.
  const F r = V::Any(tiny) ? TimesGradTiny<V>(go, ds, tiny) : TimesGrad<V>(go, ds);
  return V::Select(V::Lt(x, V::Set(kFastHigh)), r, go);
}

// grad_output * s'(x) for the half types, whose single rounding to 8 or 11
// bits swamps a few float32 ulp: the fast path's E and A in plain float32
// arithmetic, without the root expansion. Half inputs stay away from the
// root (|x - x0| > 1.4e-4 for float16, 2.8e-3 for bfloat16), where A's
// relative error is still below 2^-20.
template <class V>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE typename V::F HalfDerivative(typename V::F x) {
  using F = typename V::F;
  const ExpAndA<V> ea = ExpAndOnePlusXPlusExp<V>(x);
  const F s = V::Add(V::Set(1.0f), ea.e);
  return V::Div(V::Mul(ea.e, ea.a), V::Mul(s, s));
}

// bfloat16 shares float32's exponent range, so its gradients can be
// subnormal floats too (float16's cannot); x < kFastLow takes GradFloat.
template <class V>
JAS_HOST_DEVICE JAS_NOINLINE typename V::F GradHalfRare(typename V::F go, typename V::F x, typename V::M general,
                                                        typename V::M tiny) {
  using F = typename V::F;
  const F ds = HalfDerivative<V>(V::Max(V::Min(x, V::Set(kFastHigh)), V::Set(kFastLow)));
  F r = V::Mul(V::Select(tiny, V::Set(1.0f), go), ds);
  if (V::Any(tiny)) r = V::Select(tiny, TimesGradDouble<V>(go, ds), r);
  r = V::Select(V::Lt(x, V::Set(kFastHigh)), r, go);
  if (!V::Any(general)) return r;
  return V::Select(general, CanonicalNan<V>(GradFloat<V>(go, x)), r);
}

template <class V>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE typename V::F GradHalf(typename V::F go, typename V::F x) {
  const typename V::F abs_go = V::Abs(go);
  const auto general = NeedsGeneralPath<V>(abs_go, x);
  const auto tiny = TinyGrad<V>(abs_go);
  if (V::Any(V::Or(general, tiny))) return GradHalfRare<V>(go, x, general, tiny);
  return V::Select(V::Lt(x, V::Set(kFastHigh)), V::Mul(go, HalfDerivative<V>(x)), go);
}

}  // namespace jas::math

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_MATH_H_
