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

// s'(x) = (e*a + b) / den with every piece in float32; split so that float32
// results can finish the arithmetic in double (GradF32).
template <class V>
struct Parts {
  typename V::F e, a, b, den;
};

template <class V>
inline Parts<V> SiluParts(typename V::F x) {
  using F = typename V::F;
  const F one = V::Set(1.0f);
  // NaN-preserving clamps: V::Min/V::Max return their second operand's NaN.
  const F e = ExpNonPositive<V>(V::Neg(V::Min(V::Set(kClamp), V::Abs(x))));
  const F xc = V::Max(V::Set(-kClamp), V::Min(V::Set(kClamp), x));
  const F p = V::Add(one, xc);  // exact for x in [-2, -0.5], the region that cancels
  F g = V::Add(p, e);           // 1 + x + E
  // Near the root: g = (t - lo) * P with t = x - hi exact, P = (1 + c) + c*q,
  // q = expm1(d)/d - 1, and 1 + c = -x0 = -(hi + lo) carried as two floats.
  const F t = V::Sub(x, V::Set(kRootHi));
  const F d = V::Sub(t, V::Set(kRootLo));
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
    const F big_p = V::Add(V::Fma(V::Set(kC), q, V::Set(-kRootLo)), V::Set(-kRootHi));
    const F g_near = V::Fma(t, big_p, V::Neg(V::Mul(V::Set(kRootLo), big_p)));
    g = V::Select(near, g_near, g);
  }
  // x > 0: e*p + 1;  x <= 0: e*g + 0.
  const auto pos = V::Gt(x, V::Set(0.0f));
  const F den = V::Fma(e, V::Add(e, V::Set(2.0f)), one);  // (1 + E)^2
  return {e, V::Select(pos, p, g), V::Select(pos, one, V::Set(0.0f)), den};
}

// s'(x) in float32 (for the half types, and the precomputed-derivative pass).
template <class V>
inline typename V::F SiluDerivative(typename V::F x) {
  const Parts<V> s = SiluParts<V>(x);
  return V::Div(V::Fma(s.e, s.a, s.b), s.den);
}

// grad_output * s'(x) for float32: the pieces come from float32, the final
// combination runs in double and is rounded once, which keeps the total error
// within a few ulp. The division is a float32 reciprocal refined by one Newton
// step in double (relative error ~2^-44), identical on every ISA.
template <class V>
inline typename V::F GradF32(typename V::F go, typename V::F x) {
  using D = typename V::D;
  const Parts<V> s = SiluParts<V>(x);
  const typename V::F y0 = V::Div(V::Set(1.0f), s.den);
  D out[V::kHalves];
  for (int h = 0; h < V::kHalves; ++h) {
    const D e = V::Widen(s.e, h);
    const D one = V::SetD(1.0);
    const D num = V::FmaD(e, V::Widen(s.a, h), V::Widen(s.b, h));
    const D t = V::AddD(one, e);
    const D den = V::MulD(t, t);
    const D y = V::Widen(y0, h);
    const D r = V::FmaD(V::NegD(den), y, one);
    const D inv = V::FmaD(y, r, y);
    out[h] = V::MulD(V::MulD(V::Widen(go, h), num), inv);
  }
  return V::Narrow(out);
}

}  // namespace jas::math

#endif  // JAX_ASCEND_SILU_KERNEL_SILU_GRAD_MATH_H_
