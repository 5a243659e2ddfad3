// grad_output * s'(x) for float32 results: the fast path's compensated
// quotient, and the per-vector choice between it and the general path.
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_F32_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_F32_H_

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

// grad_output * (hi + lo), the `wide` lanes (tiny, huge, infinite or NaN
// grad_output) in double.
template <class V>
JAS_HOST_DEVICE inline typename V::F TimesGradWide(typename V::F go, Split<V> ds, typename V::M wide) {
  typename V::D out[V::kHalves];
  for (int h = 0; h < V::kHalves; ++h) out[h] = SplitTimesD<V>(V::Widen(go, h), ds, h);
  return V::Select(wide, V::Narrow(out), TimesGrad<V>(V::Select(wide, V::Set(1.0f), go), ds));
}

// Lanes whose grad_output * s'(x) finishes in double: 0 < |grad_output| <
// kTinyGrad, |grad_output| > kHugeGrad, infinite or NaN. Takes |grad_output|.
template <class V>
JAS_HOST_DEVICE inline typename V::M WideGrad(typename V::F abs_go) {
  return V::Or(TinyGrad<V>(abs_go), V::Nle(abs_go, V::Set(kHugeGrad)));
}

// The vectors with a lane near the root or off the fast path (rare in
// practice): DerivativeF32 for every lane, times grad_output (in double for
// the wide lanes), and the general path for x < kFastLow or NaN.
template <class V>
JAS_HOST_DEVICE JAS_NOINLINE typename V::F GradF32Rare(typename V::F go, typename V::F x) {
  using F = typename V::F;
  const auto general = V::Nle(V::Set(kFastLow), x);
  const auto wide = WideGrad<V>(V::Abs(go));
  // Clamped so that lanes off the fast path compute (discarded) ordinary numbers.
  const F xc = V::Max(V::Min(x, V::Set(kFastHigh)), V::Set(kFastLow));
  const Split<V> ds = DerivativeF32<V>(x, ExpAndOnePlusXPlusExp<V>(xc));
  F r = V::Any(wide) ? TimesGradWide<V>(go, ds, wide) : TimesGrad<V>(go, ds);
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
// once), written to out: DerivativeF32's hi + lo on the fast path, 1 from
// kFastHigh on (grad_output passes unchanged, as in GradF32), the general
// path's double below kFastLow and for NaN. The same s'(x) as GradF32's, so
// benchmarks/exhaustive_accuracy.cc --proof covers this path too.
template <class V>
inline void DerivativeDoubleF32(typename V::F x, double* out) {
  using F = typename V::F;
  constexpr int kPerHalf = V::kLanes / V::kHalves;
  const auto below_high = V::Lt(x, V::Set(kFastHigh));
  const Split<V> ds = DerivativeF32<V>(x, ExpAndOnePlusXPlusExp<V>(V::Max(V::Min(x, V::Set(kFastHigh)),
                                                                          V::Set(kFastLow))));
  const Split<V> s = {V::Select(below_high, ds.hi, V::Set(1.0f)), V::Select(below_high, ds.lo, V::Set(0.0f))};
  for (int h = 0; h < V::kHalves; ++h) V::StoreD(out + h * kPerHalf, SplitTimesD<V>(V::SetD(1.0), s, h));
  if (!V::Any(V::Nle(V::Set(kFastLow), x))) return;
  // Lane by lane: the vector types select floats, not doubles.
  typename V::D d[V::kHalves];
  GradDouble<V>(V::Set(1.0f), x, d);
  double general[V::kLanes];
  float xs[V::kLanes];
  for (int h = 0; h < V::kHalves; ++h) V::StoreD(general + h * kPerHalf, d[h]);
  V::Store(xs, x);
  for (int i = 0; i < V::kLanes; ++i) {
    if (!(xs[i] >= kFastLow)) out[i] = general[i];
  }
}

// |A| below which a lane may be near the root: every lane with
// |x - x0| < kNearRoot has |A| < 1.28 * kNearRoot * 1.01 < kNearRootA, so
// the fast path, which tests A (computed anyway) instead of x, hands all of
// them to GradF32Rare; the few others it hands over get the same result there.
inline constexpr float kNearRootA = 0x1p-8f;

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
  const F r = V::Any(tiny) ? TimesGradWide<V>(go, ds, tiny) : TimesGrad<V>(go, ds);
  return V::Select(V::Lt(x, V::Set(kFastHigh)), r, go);
#else
  // E and A first, for every lane (off the fast path they are ordinary
  // numbers, infinities or NaN that GradF32Rare recomputes), so that the
  // lanes off the fast path, those near the root and tiny gradients are one
  // test and one branch: a vector loop then holds fewer values across
  // branches (AVX2 has 16 registers).
  const ExpAndA<V> ea = ExpAndOnePlusXPlusExp<V>(x);
  const auto rare = V::Or(V::Nle(V::Set(kFastLow), x), V::Lt(V::Abs(ea.a), V::Set(kNearRootA)));
  const auto wide = WideGrad<V>(abs_go);
  const auto below_high = V::Lt(x, V::Set(kFastHigh));
  if (V::Any(V::Or(rare, wide))) {
    if (V::Any(rare)) return GradF32Rare<V>(go, x);
    // Inline: with subnormal gradients every vector comes here.
    return CanonicalNan<V>(V::Select(below_high, TimesGradWide<V>(go, QuotientF32<V>(ea.e, ea.a), wide), go));
  }
  return V::Select(below_high, TimesGrad<V>(go, QuotientF32<V>(ea.e, ea.a)), go);
#endif
}

}  // namespace jas::math

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_F32_H_
