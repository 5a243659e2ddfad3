// grad_output * s'(x) for bfloat16 and float16 results, whose single
// rounding to 8 or 11 bits swamps a few float32 ulp.
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_HALF_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_HALF_H_

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

template <class V>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE typename V::F GradHalf(typename V::F go, typename V::F x) {
  const typename V::F abs_go = V::Abs(go);
  const auto general = NeedsGeneralPath<V>(abs_go, x);
  const auto tiny = TinyGrad<V>(abs_go);
  if (V::Any(V::Or(general, tiny))) return GradHalfRare<V>(go, x, general, tiny);
  return V::Select(V::Lt(x, V::Set(kFastHigh)), V::Mul(go, HalfDerivative<V>(x)), go);
}

}  // namespace jas::math

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_HALF_H_
