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

// grad_output * (hi + lo), rounded once.
template <class V>
JAS_HOST_DEVICE inline typename V::F TimesGrad(typename V::F go, Split<V> ds) {
  return V::Fma(go, ds.hi, V::Mul(go, ds.lo));
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

// The vectors with a lane near the root or off the fast path (rare in
// practice): the fast path's formula for every lane, with A from the root
// expansion where |x - x0| < kNearRoot, and the general path where it is needed.
template <class V>
JAS_HOST_DEVICE JAS_NOINLINE typename V::F GradF32Rare(typename V::F go, typename V::F x) {
  using F = typename V::F;
  const F abs_go = V::Abs(go);
  const auto general = NeedsGeneralPath<V>(abs_go, x);
  const auto tiny = TinyGrad<V>(abs_go);
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
  // x = -inf: s' = -0, so g*s' is a zero of g's opposite sign (NaN for an
  // infinite or NaN g), as GradDouble computes it. Set here as well: the GPU
  // build (nvcc 13.0, sm_90) returned +0 from this function for packs of
  // several lanes, where GradDouble called alone gives -0 (cause not found;
  // the PTX computes -0).
  const F at_neg_inf = V::Mul(go, V::Set(-0.0f));
  const F d32 = V::Select(V::Eq(x, V::Set(-__builtin_inff())), at_neg_inf, V::Narrow(d));
  return V::Select(general, CanonicalNan<V>(d32), r);
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
