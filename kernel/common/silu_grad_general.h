// The general path of SiluGrad: grad_output * s'(x) for any input, written
// once over a vector-ops type V (kernel/cpu/simd_*.h, kernel/cuda/simd_cuda.cuh).
// Every ISA executes the same sequence of IEEE operations (fused
// multiply-adds included), so results are bitwise identical across ISAs,
// thread counts and tilings. Compile with -ffp-contract=off so the compiler
// adds no fusions of its own.
//
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
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_GENERAL_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_GENERAL_H_

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

}  // namespace jas::math

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_GENERAL_H_
