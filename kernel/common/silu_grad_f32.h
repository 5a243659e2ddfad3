// grad_output * s'(x) for float32 results: the fast path's compensated
// quotient, and the per-vector choice between it and the general path.
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_F32_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_F32_H_

#include <cmath>

#include "common/silu_grad_fast.h"
#include "common/silu_grad_general.h"

namespace jas::math {

// s'(x) as hi + lo on the fast path, |lo| below 2^-8 |hi|.
template <class V>
struct Split {
  typename V::F hi, lo;
};

template <class V>
JAS_HOST_DEVICE inline Split<V> QuotientF32(typename V::F e, typename V::F a) {
  using F = typename V::F;
  const F one = V::Set(1.0f);
  // 1 + E = s + sl exactly (Fast2Sum, the larger operand first; the
  // shorter (1 - s) + E is off by up to half an ulp of s once s >= 2^24,
  // which costs a float32 result at x ~ 16.64 over 4 ulp).
  const F big = V::Max(one, e), small = V::Min(one, e);
  const F s = V::Add(big, small);
  const F sl = V::Add(V::Sub(big, s), small);
  // (1 + E)^2 = dh + dl, to about twice float32's precision.
  const F dh = V::Mul(s, s);
  const F dl = V::Fma(V::Add(s, s), sl, V::Fms(s, s, dh));
  // E*A = mh + ml exactly.
  const F mh = V::Mul(e, a);
  const F ml = V::Fms(e, a, mh);
  // E*A/(1+E)^2 = q + rho/(dh + dl), rho = (mh - dh*q) + (ml - dl*q): for
  // any q within a few ulp of the quotient the first term is a few ulp of
  // mh, which the FMA rounds with an error 2^-24 of itself, so q needs no
  // correctly rounded division, and lo = rho * y restores the rest.
  const F y = V::Div(one, dh);
  const F q = V::Mul(mh, y);
  const F rho = V::Add(V::Fnma(dh, q, mh), V::Fnma(dl, q, ml));
  return {q, V::Mul(rho, y)};
}

// |A| below which a lane may be near the root: every lane with
// |x - x0| < kNearRoot has |A| < 1.28 * kNearRoot * 1.01 < kNearRootA, so
// the fast path, which tests A (computed anyway) instead of x, hands all of
// them to GradF32Rare; the few others it hands over get the same result there.
inline constexpr float kNearRootA = 0x1p-8f;

// A with the root expansion's value on the lanes within kNearRoot of x0.
template <class V>
JAS_HOST_DEVICE inline typename V::F RootA(typename V::F x, typename V::F a) {
  return V::Select(NearRootLanes<V>(x), NearRootA<V>(x), a);
}

// s'(x) = hi + lo for x in [kFastLow, kFastHigh), given E and A of x (or of
// x clamped to that range, for lanes whose results are discarded): the one
// float32 s'(x) of SiluGrad and of SwiGluGrad's dA, and what
// benchmarks/exhaustive_accuracy.cc --proof measures, before the product
// with grad_output, over every such x. Where no lane has |A| < kNearRootA no
// lane is near the root, and QuotientF32(e, a) alone gives the same bits.
template <class V>
JAS_HOST_DEVICE inline Split<V> DerivativeF32(typename V::F x, ExpAndA<V> ea) {
  return QuotientF32<V>(ea.e, RootA<V>(x, ea.a));
}

// grad_output * (hi + lo), rounded once.
template <class V>
JAS_HOST_DEVICE inline typename V::F TimesGrad(typename V::F go, Split<V> ds) {
  return V::Fma(go, ds.hi, V::Mul(go, ds.lo));
}

// g * (hi + lo) in double, half h of a vector: hi + lo and the product each
// round to double (2^-53 relative), and the caller's conversion to float32
// is the one rounding that matters, gradual underflow and overflow
// included. One product, so an infinite g gives an infinity of the right
// sign whatever lo's sign.
template <class V>
JAS_HOST_DEVICE inline typename V::D SplitTimesD(typename V::D g, Split<V> ds, int h) {
  return V::MulD(g, V::AddD(V::Widen(ds.hi, h), V::Widen(ds.lo, h)));
}

// grad_output * (hi + lo), the `tiny` lanes in double.
template <class V>
JAS_HOST_DEVICE inline typename V::F TimesGradTiny(typename V::F go, Split<V> ds, typename V::M tiny) {
  typename V::D out[V::kHalves];
  for (int h = 0; h < V::kHalves; ++h) out[h] = SplitTimesD<V>(V::Widen(go, h), ds, h);
  return V::Select(tiny, V::Narrow(out), TimesGrad<V>(V::Select(tiny, V::Set(1.0f), go), ds));
}

// The float32 seed of 1 / (1 + E), E = ts + ts*em1, for the double formulas.
template <class V>
JAS_HOST_DEVICE inline typename V::F WideSeed(ExpTerms<V> terms) {
  const typename V::F one = V::Set(1.0f);
  return V::Div(one, V::Add(one, V::Fma(terms.ts, terms.em1, terms.ts)));
}

// s'(x) in double, half h, from the fast path's E = ts + ts*em1 (exact
// pieces, em1 within 2^-33 of e^r - 1): s' = (E*(1 + x) + E*E) / (1 + E)^2,
// 1/(1 + E) the seed y refined by one Newton step. About 2^-33 of relative
// error, more where 1 + x + E cancels: lanes with |A| < kNearRootA take
// DerivativeF32's pair instead (TimesDerivativeWide).
template <class V>
JAS_HOST_DEVICE inline typename V::D WideDerivativeD(typename V::F x, typename V::F y, ExpTerms<V> terms, int h) {
  using D = typename V::D;
  const D done = V::SetD(1.0);
  const D ts = V::Widen(terms.ts, h);
  const D e = V::FmaD(ts, V::Widen(terms.em1, h), ts);
  const D w = V::Widen(y, h);
  const D inv = V::FmaD(w, V::FmaD(V::NegD(V::AddD(done, e)), w, done), w);
  return V::MulD(V::MulD(V::FmaD(e, V::AddD(done, V::Widen(x, h)), V::MulD(e, e)), inv), inv);
}

// f * s'(x) rounded once from double (f as V::kHalves doubles), for the
// lanes whose product may come near float32's overflow threshold: whether it
// rounds to the largest float or to inf depends on s'(x) to far more than
// float32 precision, which WideDerivativeD has but near the root; there
// (|A| < kNearRootA, where |s'(x)| < 2^-8) DerivativeF32's pair. x in
// [kFastLow, kFastHigh]; terms, ea and ds are x's.
template <class V>
JAS_HOST_DEVICE inline typename V::F TimesDerivativeWide(const typename V::D* f, typename V::F x, ExpTerms<V> terms,
                                                         ExpAndA<V> ea, Split<V> ds) {
  const typename V::F y = WideSeed<V>(terms);
  typename V::D pair[V::kHalves], formula[V::kHalves];
  for (int h = 0; h < V::kHalves; ++h) {
    pair[h] = SplitTimesD<V>(f[h], ds, h);
    formula[h] = V::MulD(f[h], WideDerivativeD<V>(x, y, terms, h));
  }
  return V::Select(V::Lt(V::Abs(ea.a), V::Set(kNearRootA)), V::Narrow(pair), V::Narrow(formula));
}

// The vectors with a lane near the root or off the fast path (rare in
// practice): DerivativeF32 for every lane, times grad_output (in double for
// tiny grad_output; TimesDerivativeWide for huge, infinite or NaN ones), and
// the general path for x < kFastLow or NaN.
template <class V>
JAS_HOST_DEVICE JAS_NOINLINE typename V::F GradF32Rare(typename V::F go, typename V::F x) {
  using F = typename V::F;
  const F abs_go = V::Abs(go);
  const auto general = V::Nle(V::Set(kFastLow), x);
  const auto tiny = TinyGrad<V>(abs_go);
  const auto huge = V::Nle(abs_go, V::Set(kHugeGrad));
  // Clamped so that lanes off the fast path compute (discarded) ordinary numbers.
  const F xc = V::Max(V::Min(x, V::Set(kFastHigh)), V::Set(kFastLow));
  const ExpTerms<V> terms = ExpTermsOf<V>(xc);
  const ExpAndA<V> ea = ExpAndAFrom<V>(xc, terms);
  const Split<V> ds = DerivativeF32<V>(x, ea);
  F r = V::Any(tiny) ? TimesGradTiny<V>(go, ds, tiny) : TimesGrad<V>(go, ds);
  if (V::Any(huge)) {
    typename V::D gd[V::kHalves];
    for (int h = 0; h < V::kHalves; ++h) gd[h] = V::Widen(go, h);
    r = V::Select(huge, TimesDerivativeWide<V>(gd, xc, terms, ea, ds), r);
  }
  r = CanonicalNan<V>(V::Select(V::Lt(x, V::Set(kFastHigh)), r, go));
  if (!V::Any(general)) return r;
  typename V::D d[V::kHalves];
  GradDouble<V>(go, x, d);
  // x = -inf: s' = -0, so g*s' is a zero of g's opposite sign (NaN for an
  // infinite or NaN g), as GradDouble computes it. Set here as well: the GPU
  // build (nvcc 13.0, sm_90) returned +0 from this function for packs of
  // several lanes, where GradDouble called alone gives -0 (cause not found;
  // the PTX computes -0).
  const F at_neg_inf = V::Mul(go, V::Set(-0.0f));
  const F d32 = V::Select(V::Eq(x, V::Set(-__builtin_inff())), at_neg_inf, V::Narrow(d));
  return V::Select(general, CanonicalNan<V>(d32), r);
}

// s'(x) in double for kLanes float32 x, each shared by many grad_output
// (the CPU's broadcast path multiplies each by it in double and rounds
// once), written to out: what GradF32 takes for a huge grad_output, so that
// one s'(x) serves every grad_output: WideDerivativeD, DerivativeF32's
// hi + lo where |A| < kNearRootA, 1 from kFastHigh on (grad_output passes
// unchanged), the general path's double below kFastLow and for NaN.
template <class V>
inline void DerivativeDoubleF32(typename V::F x, double* out) {
  constexpr int kL = V::kLanes, kPerHalf = V::kLanes / V::kHalves;
  const typename V::F xc = V::Max(V::Min(x, V::Set(kFastHigh)), V::Set(kFastLow));
  const ExpTerms<V> terms = ExpTermsOf<V>(xc);
  const ExpAndA<V> ea = ExpAndAFrom<V>(xc, terms);
  const Split<V> ds = DerivativeF32<V>(x, ea);
  const typename V::F y = WideSeed<V>(terms);
  // Lane by lane: the vector types select floats, not doubles.
  double pair[kL], formula[kL], general[kL] = {};
  float xs[kL], a[kL];
  for (int h = 0; h < V::kHalves; ++h) {
    V::StoreD(pair + h * kPerHalf, SplitTimesD<V>(V::SetD(1.0), ds, h));
    V::StoreD(formula + h * kPerHalf, WideDerivativeD<V>(xc, y, terms, h));
  }
  if (V::Any(V::Nle(V::Set(kFastLow), x))) {
    typename V::D d[V::kHalves];
    GradDouble<V>(V::Set(1.0f), x, d);
    for (int h = 0; h < V::kHalves; ++h) V::StoreD(general + h * kPerHalf, d[h]);
  }
  V::Store(xs, x);
  V::Store(a, ea.a);
  for (int i = 0; i < kL; ++i) {
    out[i] = !(xs[i] >= kFastLow)           ? general[i]
             : xs[i] >= kFastHigh           ? 1.0
             : std::fabs(a[i]) < kNearRootA ? pair[i]
                                            : formula[i];
  }
}

// grad_output * s'(x) for float32 results; x >= kFastHigh (+inf included)
// gives grad_output exactly.
template <class V>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE typename V::F GradF32(typename V::F go, typename V::F x) {
  using F = typename V::F;
  const F abs_go = V::Abs(go);
#if defined(__CUDA_ARCH__)
  // On the GPU registers are plenty and a vote covers a warp's whole pack,
  // so packs with a rare lane are common: the lanes for the general path
  // leave before e^x is computed, which keeps the path into GradF32Rare short.
  if (V::Any(NeedsGeneralPath<V>(abs_go, x))) return GradF32Rare<V>(go, x);
  const ExpAndA<V> ea = ExpAndOnePlusXPlusExp<V>(x);
  if (V::Any(V::Lt(V::Abs(ea.a), V::Set(kNearRootA)))) return GradF32Rare<V>(go, x);
  const Split<V> ds = QuotientF32<V>(ea.e, ea.a);
  const auto tiny = TinyGrad<V>(abs_go);
  const F r = V::Any(tiny) ? TimesGradTiny<V>(go, ds, tiny) : TimesGrad<V>(go, ds);
  return V::Select(V::Lt(x, V::Set(kFastHigh)), r, go);
#else
  // E and A first, for every lane (off the fast path they are ordinary
  // numbers, infinities or NaN that GradF32Rare recomputes), so that the
  // lanes off the fast path, those near the root and tiny gradients are one
  // test and one branch: a vector loop then holds fewer values across
  // branches (AVX2 has 16 registers).
  const ExpAndA<V> ea = ExpAndOnePlusXPlusExp<V>(x);
  const auto rare = V::Or(NeedsGeneralPath<V>(abs_go, x), V::Lt(V::Abs(ea.a), V::Set(kNearRootA)));
  const auto tiny = TinyGrad<V>(abs_go);
  const auto below_high = V::Lt(x, V::Set(kFastHigh));
  if (V::Any(V::Or(rare, tiny))) {
    if (V::Any(rare)) return GradF32Rare<V>(go, x);
    // Inline: with subnormal gradients every vector comes here.
    return V::Select(below_high, TimesGradTiny<V>(go, QuotientF32<V>(ea.e, ea.a), tiny), go);
  }
  return V::Select(below_high, TimesGrad<V>(go, QuotientF32<V>(ea.e, ea.a)), go);
#endif
}

}  // namespace jas::math

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_F32_H_
