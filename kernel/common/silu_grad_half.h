// grad_output * s'(x) for bfloat16 and float16 results, whose single
// rounding to 8 or 11 bits swamps a few float32 ulp.
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_HALF_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_HALF_H_

#include "common/silu_grad_f32.h"  // the compensated quotient, for float16's overflow edge
#include "common/silu_grad_fast.h"
#include "common/silu_grad_general.h"

namespace jas::math {

// grad_output * ds for the half types' tiny lanes, finished in double:
// float <-> double conversions take subnormals at full speed, and the
// conversion back is the one rounding.
template <class V>
JAS_HOST_DEVICE inline typename V::F TimesGradDouble(typename V::F go, typename V::F ds) {
  typename V::D out[V::kHalves];
  for (int h = 0; h < V::kHalves; ++h) out[h] = V::MulD(V::Widen(go, h), V::Widen(ds, h));
  return V::Narrow(out);
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

// The half types' lanes for the general path in one comparison (mask
// operations cost more than arithmetic on x86): x < kFastLow or NaN, and
// grad_output infinite, NaN or above kHalfHugeGrad. Scaling x by 2^122 is
// exact, so the boundary stays at x = kFastLow; grad_output - grad_output is
// 0 unless grad_output is infinite or NaN, and V::Max returns its second
// operand's NaN. kHalfHugeGrad = 1.03 * 2^127 is above float32's kHugeGrad:
// a bfloat16 result overflows only at 1.996 * 2^127, far above
// kHalfHugeGrad * max s' = 1.14 * 2^127.
inline constexpr float kHalfHugeGrad = -kFastLow * 0x1p122f;

// With kGradScale = 2^112 (float16) the test also takes |grad_output| >
// 33 * 2^10 = 33792 (exactly: powers of two scale exactly), the only ones
// whose products can come near float16's overflow edge (see F16OverflowEdge).
template <class V, float kGradScale = 1.0f>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE typename V::M HalfGeneralLanes(typename V::F go, typename V::F x) {
  typename V::F abs_go = V::Abs(go);
  if constexpr (kGradScale != 1.0f) abs_go = V::Mul(abs_go, V::Set(kGradScale));
  const typename V::F v = V::Max(abs_go, V::Fma(x, V::Set(-0x1p122f), V::Sub(go, go)));
  return V::Nle(v, V::Set(kHalfHugeGrad));
}

// float16 results round to inf from 65520 on (the midpoint between 65504,
// the largest float16, and 65536): a float32 product within its error
// (2^-21 relative) of 65520 may lie on the wrong side of it. Products of
// float16 inputs come no closer to it than 2^-24.3 relative (65519.99638 at
// g = 59584, x = 2.332; tests/kernel/test_half_accuracy.cc checks every such
// pair); for lanes from 65519 on the side is decided in double from the
// float32 path's compensated quotient, and the result set 1 off the edge.
// One-sided: finite products past the edge get the same result from
// F16OverflowEdge, which leaves infinite ones (the general path's) alone.
template <class V>
JAS_HOST_DEVICE inline typename V::M NearF16Overflow(typename V::F r) {
  return V::Gt(V::Abs(r), V::Set(65519.0f));
}

template <class V>
JAS_HOST_DEVICE inline typename V::F F16OverflowEdge(typename V::F go, typename V::F x, typename V::F r,
                                                           typename V::M near) {
  using F = typename V::F;
  using D = typename V::D;
  const ExpAndA<V> ea = ExpAndOnePlusXPlusExp<V>(V::Max(V::Min(x, V::Set(kFastHigh)), V::Set(kFastLow)));
  const Split<V> ds = QuotientF32<V>(ea.e, ea.a);
  const F edge = V::Select(V::Lt(r, V::Set(0.0f)), V::Set(-65520.0f), V::Set(65520.0f));
  D past[V::kHalves];  // go * s'(x) - edge
  for (int h = 0; h < V::kHalves; ++h) {
    const D g = V::Widen(go, h);
    past[h] = V::AddD(V::FmaD(g, V::Widen(ds.hi, h), V::MulD(g, V::Widen(ds.lo, h))), V::NegD(V::Widen(edge, h)));
  }
  const F step = V::Max(V::Min(V::Mul(V::Narrow(past), V::Set(0x1p100f)), V::Set(1.0f)), V::Set(-1.0f));
  return V::Select(V::And(near, V::Lt(V::Abs(r), V::Set(__builtin_inff()))), V::Add(edge, step), r);
}

// float16 vectors with a lane for the general path or |grad_output| > 33792.
template <class V>
JAS_HOST_DEVICE JAS_NOINLINE typename V::F GradF16Rare(typename V::F go, typename V::F x) {
  typename V::F r = GradHalfRare<V>(go, x, HalfGeneralLanes<V>(go, x), V::Lt(x, x));
  const auto near = NearF16Overflow<V>(r);
  return V::Any(near) ? F16OverflowEdge<V>(go, x, r, near) : r;
}

// kFloat16: float16 gradients are never below kTinyGrad (2^-24 is the
// smallest), so float16 skips that test, and only float16 has an overflow
// edge within the fast path's reach.
template <class V, bool kFloat16>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE typename V::F GradHalf(typename V::F go, typename V::F x) {
  using F = typename V::F;
  if constexpr (!kFloat16) {
    const auto general = HalfGeneralLanes<V>(go, x);
    const auto tiny = TinyGrad<V>(V::Abs(go));
    if (V::Any(V::Or(general, tiny))) return GradHalfRare<V>(go, x, general, tiny);
    return V::Select(V::Lt(x, V::Set(kFastHigh)), V::Mul(go, HalfDerivative<V>(x)), go);
  } else {
    if (V::Any(HalfGeneralLanes<V, 0x1p112f>(go, x))) return GradF16Rare<V>(go, x);
    return V::Select(V::Lt(x, V::Set(kFastHigh)), V::Mul(go, HalfDerivative<V>(x)), go);
  }
}

}  // namespace jas::math

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_HALF_H_
