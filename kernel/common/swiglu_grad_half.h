// SwiGluGrad for bfloat16 and float16 results, whose single rounding to 8 or
// 11 bits swamps a few float32 ulp (as silu_grad_half.h does for SiluGrad):
//   dA = (g*B) * s'(A),   dB = g * silu(A)
// with s'(A) and silu(A) in plain float32 from the fast path's E = e^A and
// A1 = 1 + A + E (one reciprocal of 1 + E, no compensation). g*B is exact in
// float32 (8 + 8 or 11 + 11 significant bits) wherever it is normal.
//
// Why the results stay within 1 ulp: a lane stays on this path only when A
// is in [kFastLow, kFastHigh) or above it (dA = g*B, dB = g*A, rounded once,
// SwiGluGradF32's arithmetic there) and both float32 results lie in the half
// type's normal range with a margin (HalfSwiGluRange). There g*B is exact,
// every float32 operation is on normal numbers, and scaling g or B by a
// power of two scales the float32 result and its rounding to the half type
// alike. So a result's error in ulps depends only on A and on the
// significand of g*B (dA) or of g (dB): benchmarks/exhaustive_swiglu.cc
// (mode "halfpath") checks every half A in the range against every such
// significand: at most 0.50072 ulp (float16) and 0.50005 ulp (bfloat16).
// Like SwiGluGradF32's, the results are not all correctly rounded (the
// counts are in docs/accuracy.md). Every other lane (zeros, infinities, NaN,
// subnormal or near-overflow results, A below kFastLow) takes
// SwiGluGradF32, so its bits are SwiGluGradF32's.
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_SWIGLU_GRAD_HALF_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_SWIGLU_GRAD_HALF_H_

#include "common/dtype.h"
#include "common/silu_grad_fast.h"
#include "common/swiglu_grad_math.h"

namespace jas::math {

// s'(A) and silu(A) in float32 for A in [kFastLow, kFastHigh]: with y =
// 1/(1 + E), s'(A) = E*A1*y*y and silu(A) = A*E*y, each within a few float32
// ulp (half inputs stay away from the root of s', where A1 cancels: see
// HalfDerivative).
template <class V>
struct HalfSwiGluParts {
  typename V::F ds, silu;
};

template <class V>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE HalfSwiGluParts<V> SwiGluHalfParts(typename V::F a) {
  using F = typename V::F;
  const ExpAndA<V> ea = ExpAndOnePlusXPlusExp<V>(a);
  const F y = V::Div(V::Set(1.0f), V::Add(V::Set(1.0f), ea.e));
  return {V::Mul(V::Mul(V::Mul(ea.e, ea.a), y), y), V::Mul(V::Mul(a, ea.e), y)};
}

// The float32 results before the one rounding to the half type, for lanes
// that stay on this path (others get values that the caller discards).
template <class V>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE SwiGluPair<V> SwiGluHalfFast(typename V::F g, typename V::F a, typename V::F b) {
  const HalfSwiGluParts<V> p = SwiGluHalfParts<V>(a);
  const typename V::F gb = V::Mul(g, b);
  const auto below_high = V::Lt(a, V::Set(kFastHigh));
  return {V::Select(below_high, V::Mul(gb, p.ds), gb), V::Select(below_high, V::Mul(g, p.silu), V::Mul(g, a))};
}

// The range of |result| in which a lane may stay on this path: from twice
// the smallest normal of the half type (the float32 error of a few 2^-23
// cannot cross it) to a power of two below its overflow threshold.
template <bool kFloat16>
struct HalfSwiGluRange {
  static constexpr float kLow = kFloat16 ? 0x1p-13f : 0x1p-125f;
  static constexpr float kHigh = kFloat16 ? 0x1p15f : 0x1p127f;
};

// Lanes that leave this path: A below kFastLow (NaN A gives NaN results and
// leaves by the range test), or a result out of HalfSwiGluRange's range,
// zero, infinite or NaN (Nle is true for unordered operands).
template <class V, bool kFloat16>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE typename V::M HalfSwiGluRare(typename V::F a, SwiGluPair<V> r) {
  using Range = HalfSwiGluRange<kFloat16>;
  const typename V::F abs_da = V::Abs(r.da), abs_db = V::Abs(r.db), low = V::Set(Range::kLow),
                      high = V::Set(Range::kHigh);
  const auto out_da = V::Or(V::Nle(low, abs_da), V::Nle(abs_da, high));
  const auto out_db = V::Or(V::Nle(low, abs_db), V::Nle(abs_db, high));
  return V::Or(V::Or(out_da, out_db), V::Lt(a, V::Set(kFastLow)));
}

template <class V>
JAS_HOST_DEVICE JAS_NOINLINE SwiGluPair<V> SwiGluHalfRare(typename V::F g, typename V::F a, typename V::F b,
                                                          typename V::M rare, SwiGluPair<V> r) {
  const SwiGluPair<V> w = SwiGluGradF32<V>(g, a, b);
  return {V::Select(rare, w.da, r.da), V::Select(rare, w.db, r.db)};
}

// (dA, dB) for bfloat16 (kFloat16 false) and float16 results, in float32
// before the one rounding to the half type.
template <class V, bool kFloat16>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE SwiGluPair<V> SwiGluGradHalf(typename V::F g, typename V::F a, typename V::F b) {
  const SwiGluPair<V> r = SwiGluHalfFast<V>(g, a, b);
  const auto rare = HalfSwiGluRare<V, kFloat16>(a, r);
  if (V::Any(rare)) return SwiGluHalfRare<V>(g, a, b, rare, r);
  return r;
}

// The SwiGluGrad arithmetic of each dtype, for the kernels' loops.
template <class V, DataType T>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE SwiGluPair<V> SwiGluGradOf(typename V::F g, typename V::F a, typename V::F b) {
  if constexpr (T == DataType::kFloat32) {
    return SwiGluGradF32<V>(g, a, b);
  } else {
    return SwiGluGradHalf<V, T == DataType::kFloat16>(g, a, b);
  }
}

}  // namespace jas::math

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_SWIGLU_GRAD_HALF_H_
