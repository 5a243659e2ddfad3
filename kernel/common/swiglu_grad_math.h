// The SwiGluGrad arithmetic, written once over a vector-ops type V (as the
// SiluGrad arithmetic is, and with its pieces):
//   dA = g * B * s'(A),   dB = g * silu(A),   silu(A) = A * E / (1 + E), E = e^A
// for float32 results, and for the half types' lanes that leave their own
// path (swiglu_grad_half.h).
//
// The fast path covers A in [kFastLow, kFastHigh), with g, B and g*B in
// [kTinyGrad, kSwiGluHuge] in magnitude or zero, and A zero or of magnitude
// at least kSwiGluTinyA (SwiGluGradF32 says where the others go):
//   - dA: g*B = gbh + gbl exactly (an FMA), and s'(A) = hi + lo from
//     SiluGrad's DerivativeF32 (the root expansion included), so dA
//     carries SiluGrad's error;
//   - dB: 1 + E and A*E as float pairs (E's own rounding carried as e_lo),
//     the quotient compensated as SiluGrad's is, one rounding at the end.
// A lane's path depends on its own inputs only, so results do not depend on
// the vector width, the ISA or the thread count.
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_SWIGLU_GRAD_MATH_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_SWIGLU_GRAD_MATH_H_

#include "common/silu_grad_f32.h"
#include "common/silu_grad_fast.h"
#include "common/silu_grad_general.h"

namespace jas::math {

// |g|, |B|, |g*B| above which a product may come near float32's overflow
// threshold (|silu(A)| < kFastHigh < 2^5 on the fast path), and |A| below
// which A*E may lose bits to underflow: both leave the fast path.
inline constexpr float kSwiGluHuge = 0x1p100f;
inline constexpr float kSwiGluTinyA = 0x1p-60f;

template <class V>
struct SwiGluPair {
  typename V::F da, db;
};

// Lanes with 0 < |v| < below.
template <class V>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE typename V::M TinyNonzero(typename V::F abs_v, float below) {
  return V::And(V::Lt(abs_v, V::Set(below)), V::Gt(abs_v, V::Set(0.0f)));
}

// Below kScaleBelow, s'(A) = E*(1 + A) and silu(A) = A*E to within E
// (relative, E < 2^-92), with E = e^A. g*B reaches 2^256, so s'(A) is
// needed down to 2^-406 where SiluParts' scaled float32 E stops at 2^-309:
// E is taken as (e^(A/2) * 2^160)^2 * 2^-320 in double instead. From
// kSwiGluLowest on, |g*B*s'(A)| and |g*silu(A)| are below 2^-160 and round
// to 0 (with the sign of the limit).
inline constexpr float kSwiGluLowest = -300.0f;

// The general path for every lane: s'(A) and sigma(A) from SiluParts (E =
// e^-|A|), each reciprocal a float32 seed refined by one Newton step in
// double, or E from the half-argument exponential below kScaleBelow; g*B
// is exact in double, and each result is rounded once, from double.
// SwiGluGeneralDouble gives dA and dB in double before that rounding (what
// benchmarks/exhaustive_swiglu.cc --proof measures); lanes below
// kScaleBelow take the `_low` values.
template <class V>
struct SwiGluGeneralD {
  typename V::D da[V::kHalves], db[V::kHalves], da_low[V::kHalves], db_low[V::kHalves];
  typename V::M low;
};

template <class V>
JAS_HOST_DEVICE inline SwiGluGeneralD<V> SwiGluGeneralDouble(typename V::F g, typename V::F a, typename V::F b) {
  using F = typename V::F;
  using D = typename V::D;
  SwiGluGeneralD<V> out;
  const Parts<V> s = SiluParts<V>(V::Max(V::Set(kScaleBelow), a));  // a's NaN passes through
  const F one = V::Set(1.0f);
  const F t1 = V::Add(one, s.e);  // 1 + E
  const F y2 = V::Div(one, s.den), y1 = V::Div(one, t1);
  // silu(A) = A * m / (1 + E): A > 0: m = 1 (sigma = 1/(1 + E)); A <= 0: m = E.
  const auto pos = V::Gt(a, V::Set(0.0f));
  const F m = V::Select(pos, one, s.e);
  // The low side: E = (e^(A'/2) * 2^160)^2 * 2^-320, A' = max(A, kSwiGluLowest).
  const auto low = V::Lt(a, V::Set(kScaleBelow));
  out.low = low;
  const F a_low = V::Max(V::Set(kSwiGluLowest), V::Min(a, V::Set(kScaleBelow)));
  // A = -inf: E = 0 exactly, so dA and dB are the signed zeros of the limit
  // (NaN for an infinite factor, as SiluGrad gives).
  const F e_half = V::Select(V::Eq(a, V::Set(-__builtin_inff())), V::Set(0.0f),
                             ExpNonPositive<V>(V::Mul(a_low, V::Set(0.5f)), V::Set(kScaleBits)));
  const D done = V::SetD(1.0), unscale = V::SetD(0x1p-160);
  for (int h = 0; h < V::kHalves; ++h) {
    const D t = V::Widen(t1, h);
    const D den = V::MulD(t, t);
    const D w2 = V::Widen(y2, h), w1 = V::Widen(y1, h);
    const D inv2 = V::FmaD(w2, V::FmaD(V::NegD(den), w2, done), w2);
    const D inv1 = V::FmaD(w1, V::FmaD(V::NegD(t), w1, done), w1);
    const D num = V::FmaD(V::Widen(s.e, h), V::Widen(s.a, h), V::Widen(s.b, h));
    const D gd = V::Widen(g, h);
    const D gb = V::MulD(gd, V::Widen(b, h));
    const D eh = V::MulD(V::Widen(e_half, h), unscale);
    const D e = V::MulD(eh, eh);
    const D al = V::Widen(a_low, h);
    out.da[h] = V::MulD(gb, V::MulD(num, inv2));
    out.db[h] = V::MulD(gd, V::MulD(V::MulD(V::Widen(a, h), V::Widen(m, h)), inv1));
    out.da_low[h] = V::MulD(gb, V::MulD(e, V::AddD(done, al)));
    out.db_low[h] = V::MulD(gd, V::MulD(al, e));
  }
  return out;
}

template <class V>
JAS_HOST_DEVICE JAS_NOINLINE SwiGluPair<V> SwiGluGeneral(typename V::F g, typename V::F a, typename V::F b) {
  const SwiGluGeneralD<V> d = SwiGluGeneralDouble<V>(g, a, b);
  return {CanonicalNan<V>(V::Select(d.low, V::Narrow(d.da_low), V::Narrow(d.da))),
          CanonicalNan<V>(V::Select(d.low, V::Narrow(d.db_low), V::Narrow(d.db)))};
}

// silu(A) on the fast path as hi + lo: A * E / (1 + E) with E = e + e_lo,
// 1 + E = s + sl (Fast2Sum, the larger operand first, as QuotientF32 does),
// A*E = nh + nl; q = nh / s to a few ulp, and the remainder rho = (nh - s*q)
// + (nl - sl*q) restores the rest, so the final FMA with g is the one
// rounding that is not compensated.
template <class V>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE Split<V> SiluF32(typename V::F a, typename V::F e, typename V::F e_lo) {
  using F = typename V::F;
  const F one = V::Set(1.0f);
  const F big = V::Max(one, e), small = V::Min(one, e);
  const F s = V::Add(big, small);
  const F sl = V::Add(V::Add(V::Sub(big, s), small), e_lo);
  const F nh = V::Mul(a, e);
  const F nl = V::Fma(a, e_lo, V::Fms(a, e, nh));
  const F y = V::Div(one, s);
  const F q = V::Mul(nh, y);
  const F rho = V::Add(V::Fnma(s, q, nh), V::Fnma(sl, q, nl));
  return {q, V::Mul(rho, y)};
}

// silu(A) = hi + lo for A in [kFastLow, kFastHigh) from the fast path's
// pieces (what benchmarks/exhaustive_swiglu.cc --proof measures).
template <class V>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE Split<V> SiluOfF32(typename V::F a, ExpTerms<V> terms, ExpAndA<V> ea) {
  return SiluF32<V>(a, ea.e, V::Fma(terms.ts, terms.em1, V::Sub(terms.ts, ea.e)));
}

// g*B*(hi + lo) rounded once: g*B = gbh + gbl exactly, and the terms below
// gbh*hi add under 2^-44 of relative error.
template <class V>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE typename V::F TimesPair(typename V::F gbh, typename V::F gbl, Split<V> ds) {
  return V::Fma(gbh, ds.hi, V::Fma(gbh, ds.lo, V::Mul(gbl, ds.hi)));
}

// dB of SwiGluWide in double, before its rounding to float32: silu(A) =
// A*E / (1 + E) from the fast path's E = ts + ts*em1 (exact pieces, em1
// within 2^-33 of e^r - 1), about 2^-33 of relative error; the reciprocal
// is WideSeed's float32 seed refined by one Newton step.
template <class V>
JAS_HOST_DEVICE inline typename V::D WideSiluTimesD(typename V::D gd, typename V::F a, typename V::F y,
                                                    ExpTerms<V> terms, int h) {
  using D = typename V::D;
  const D done = V::SetD(1.0);
  const D ts = V::Widen(terms.ts, h), ad = V::Widen(a, h);
  const D e = V::FmaD(ts, V::Widen(terms.em1, h), ts);
  const D w = V::Widen(y, h);
  const D inv = V::FmaD(w, V::FmaD(V::NegD(V::AddD(done, e)), w, done), w);
  return V::MulD(gd, V::MulD(V::MulD(ad, e), inv));
}

// Lanes with A on the fast path (at or above kFastLow) whose g, B or g*B is
// huge, tiny, infinite or NaN, or whose A is tiny: g*B exact in double
// times s'(A) from TimesDerivativeWide (SiluGrad's for a huge
// grad_output), and dB from WideSiluTimesD, each rounded once from double,
// so products near float32's overflow threshold or in its subnormal range
// take the one rounding. From kFastHigh on, dA = g*B and dB = g*A, as on
// the fast path.
template <class V>
JAS_HOST_DEVICE JAS_NOINLINE SwiGluPair<V> SwiGluWide(typename V::F g, typename V::F a, typename V::F b,
                                                      ExpTerms<V> terms, ExpAndA<V> ea, Split<V> ds) {
  using F = typename V::F;
  using D = typename V::D;
  const F y = WideSeed<V>(terms);
  D db[V::kHalves], gb[V::kHalves], ga[V::kHalves];
  for (int h = 0; h < V::kHalves; ++h) {
    const D gd = V::Widen(g, h);
    gb[h] = V::MulD(gd, V::Widen(b, h));
    ga[h] = V::MulD(gd, V::Widen(a, h));
    db[h] = WideSiluTimesD<V>(gd, a, y, terms, h);
  }
  const auto below_high = V::Lt(a, V::Set(kFastHigh));
  return {CanonicalNan<V>(V::Select(below_high, TimesDerivativeWide<V>(gb, a, terms, ea, ds), V::Narrow(gb))),
          CanonicalNan<V>(V::Select(below_high, V::Narrow(db), V::Narrow(ga)))};
}

// Lanes for SwiGluWide (see SwiGluGradF32): g, B, g*B or A above
// kSwiGluHuge (infinities and NaN included), g tiny but not zero, g*B tiny
// from nonzero factors, or A tiny but not zero.
template <class V>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE typename V::M SwiGluWideLanes(typename V::F g, typename V::F a, typename V::F b,
                                                                typename V::F gbh) {
  const typename V::F abs_g = V::Abs(g), abs_b = V::Abs(b), abs_gb = V::Abs(gbh);
  // V::Max returns its second operand's NaN: a NaN g or B reaches g*B, the
  // last operand; a NaN A is on the general path anyway.
  const typename V::F biggest = V::Max(a, V::Max(V::Max(abs_g, abs_b), abs_gb));
  auto wide = V::Or(V::Nle(biggest, V::Set(kSwiGluHuge)), TinyNonzero<V>(abs_g, kTinyGrad));
  wide = V::Or(wide, V::And(V::Lt(abs_gb, V::Set(kTinyGrad)),
                            V::And(V::Gt(abs_b, V::Set(0.0f)), V::Gt(abs_g, V::Set(0.0f)))));
  return V::Or(wide, TinyNonzero<V>(V::Abs(a), kSwiGluTinyA));
}

// The vectors with a lane off the fast path (rare in practice): `fast` is
// the fast path's (dA, dB), recomputed here where a lane needs it, so that
// the fast path holds few values across its branch.
template <class V>
JAS_HOST_DEVICE JAS_NOINLINE SwiGluPair<V> SwiGluGradRare(typename V::F g, typename V::F a, typename V::F b,
                                                          SwiGluPair<V> fast) {
  using F = typename V::F;
  const F gbh = V::Mul(g, b);
  const ExpTerms<V> terms = ExpTermsOf<V>(a);
  const ExpAndA<V> ea = ExpAndAFrom<V>(a, terms);
  const Split<V> ds = DerivativeF32<V>(a, ea);
  // Near the root DerivativeF32 differs from the fast path's QuotientF32;
  // from kFastHigh on, E and A are no numbers to test and dA stays g*B.
  const auto near_root = V::And(V::Lt(V::Abs(ea.a), V::Set(kNearRootA)), V::Lt(a, V::Set(kFastHigh)));
  F da = V::Select(near_root, TimesPair<V>(gbh, V::Fms(g, b, gbh), ds), fast.da);
  F db = fast.db;
  const auto wide = SwiGluWideLanes<V>(g, a, b, gbh);
  if (V::Any(wide)) {
    const SwiGluPair<V> w = SwiGluWide<V>(g, a, b, terms, ea, ds);
    da = V::Select(wide, w.da, da);
    db = V::Select(wide, w.db, db);
  }
  const auto low = V::Nle(V::Set(kFastLow), a);
  if (V::Any(low)) {
    const SwiGluPair<V> w = SwiGluGeneral<V>(g, a, b);
    da = V::Select(low, w.da, da);
    db = V::Select(low, w.db, db);
  }
  return {da, db};
}

// (dA, dB) for float32 results; A >= kFastHigh (+inf included) gives dA =
// g*B and dB = g*A rounded once (s'(A) and sigma(A) are within 2^-30 of 1).
template <class V>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE SwiGluPair<V> SwiGluGradF32(typename V::F g, typename V::F a, typename V::F b) {
  using F = typename V::F;
  const F gbh = V::Mul(g, b);
  const ExpTerms<V> terms = ExpTermsOf<V>(a);
  const ExpAndA<V> ea = ExpAndAFrom<V>(a, terms);
  // Three kinds of lane leave the fast path (SwiGluGradRare):
  // - A below kFastLow or NaN (Nle is true for unordered operands): the
  //   general path, for dA and dB;
  // - A near the root of s' (|A| < kNearRootA): s'(A) from DerivativeF32,
  //   the root expansion's A where |A - x0| < kNearRoot, as SiluGrad's;
  // - g, B or g*B above kSwiGluHuge (infinities and NaN included), A above
  //   it (g*A is dB there, and 0 * inf must give the canonical NaN), g tiny
  //   but not zero, g*B tiny from nonzero factors (it may have underflowed
  //   to 0), or A tiny but not zero: the fast path's s'(A) and e^A,
  //   finished in double (SwiGluWide).
  const auto low = V::Nle(V::Set(kFastLow), a);
  const auto near_root = V::Lt(V::Abs(ea.a), V::Set(kNearRootA));
  const auto wide = SwiGluWideLanes<V>(g, a, b, gbh);
  const auto below_high = V::Lt(a, V::Set(kFastHigh));
  // Where no lane is near the root, QuotientF32 is DerivativeF32.
  const Split<V> ds = QuotientF32<V>(ea.e, ea.a);
  const Split<V> silu = SiluOfF32<V>(a, terms, ea);
  const SwiGluPair<V> fast = {V::Select(below_high, TimesPair<V>(gbh, V::Fms(g, b, gbh), ds), gbh),
                              V::Select(below_high, V::Fma(g, silu.hi, V::Mul(g, silu.lo)), V::Mul(g, a))};
  if (V::Any(V::Or(V::Or(low, near_root), wide))) return SwiGluGradRare<V>(g, a, b, fast);
  return fast;
}

}  // namespace jas::math

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_SWIGLU_GRAD_MATH_H_
