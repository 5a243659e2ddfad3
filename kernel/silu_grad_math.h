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
#ifndef JAX_ASCEND_SILU_KERNEL_SILU_GRAD_MATH_H_
#define JAX_ASCEND_SILU_KERNEL_SILU_GRAD_MATH_H_

#include <cstdint>

namespace jas::math {

// x0 as a float32 pair (hi + lo), and c = -1 - x0 = e^x0.
inline constexpr float kRootHi = -0x1.474974p+0f;   // -1.2784646
inline constexpr float kRootLo = 0x1.bdf6fap-27f;   //  1.2979283e-08
inline constexpr float kOnePlusC = 0x1.474974p+0f;  // -x0, rounded
inline constexpr float kC = 0x1.1d25d0p-2f;         // 0.27846456
// Window around the root where the expansion is used (|d| < kRootWindow).
inline constexpr float kRootWindow = 0.5f;
// Beyond |x| = 120, exp(-|x|) is 0 in float32 and 1 + x only needs its sign.
inline constexpr float kClamp = 120.0f;

// exp(z) for z = -|x| in [-kClamp, 0] (NaN passes through): Cody-Waite
// reduction z = n*ln2 + r, |r| <= ln2/2, Taylor polynomial to degree 7
// (truncation below 0.1 ulp), then scaling by 2^n in two halves so results in
// the subnormal range come out right.
template <class V>
inline typename V::F ExpNonPositive(typename V::F z) {
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
  return V::ScaleByPow2(p, n);  // n in [-174, 0]
}

// s'(x) in float32.
template <class V>
inline typename V::F SiluDerivative(typename V::F x) {
  using F = typename V::F;
  const F one = V::Set(1.0f);
  // NaN-preserving clamps: V::Min/V::Max return their second operand's NaN.
  const F a = V::Min(V::Set(kClamp), V::Abs(x));
  const F e = ExpNonPositive<V>(V::Neg(a));
  const F xc = V::Max(V::Set(-kClamp), V::Min(V::Set(kClamp), x));
  const F p = V::Add(one, xc);  // exact for x in [-2, -0.5], the region that cancels

  const F num_pos = V::Fma(e, p, one);
  F g = V::Add(p, e);  // 1 + x + E
  // Near the root: g = d * ((1 + c) + c*q), q = expm1(d)/d - 1.
  const F d = V::Sub(V::Sub(x, V::Set(kRootHi)), V::Set(kRootLo));
  const auto near = V::Lt(V::Abs(d), V::Set(kRootWindow));
  if (V::Any(near)) {
    F q = V::Set(1.0f / 362880.0f);
    q = V::Fma(q, d, V::Set(1.0f / 40320.0f));
    q = V::Fma(q, d, V::Set(1.0f / 5040.0f));
    q = V::Fma(q, d, V::Set(1.0f / 720.0f));
    q = V::Fma(q, d, V::Set(1.0f / 120.0f));
    q = V::Fma(q, d, V::Set(1.0f / 24.0f));
    q = V::Fma(q, d, V::Set(1.0f / 6.0f));
    q = V::Fma(q, d, V::Set(0.5f));
    q = V::Mul(q, d);
    const F g_near = V::Mul(d, V::Fma(V::Set(kC), q, V::Set(kOnePlusC)));
    g = V::Select(near, g_near, g);
  }
  const F num_neg = V::Mul(e, g);
  const F num = V::Select(V::Gt(x, V::Set(0.0f)), num_pos, num_neg);
  const F den = V::Fma(e, V::Add(e, V::Set(2.0f)), one);  // (1 + E)^2
  return V::Div(num, den);
}

}  // namespace jas::math

#endif  // JAX_ASCEND_SILU_KERNEL_SILU_GRAD_MATH_H_
