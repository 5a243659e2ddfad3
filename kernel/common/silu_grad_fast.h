// What the float32 and half fast paths (silu_grad_f32.h, silu_grad_half.h)
// share: e^x and 1 + x + e^x from a table, the root expansion, and the
// per-lane tests that send a lane to the general path (silu_grad_general.h).
// The choice is made per lane, so results do not depend on which other
// lanes share a vector (nor on the ISA's vector width); a vector runs the
// general path only when one of its lanes needs it.
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_FAST_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_FAST_H_

#include "common/silu_grad_general.h"  // the root x0 and e^x0

namespace jas::math {

// The fast path covers x in [kFastLow, kFastHigh) (x >= kFastHigh gives
// grad_output exactly) with kTinyGrad <= |grad_output| <= kHugeGrad or
// grad_output = 0; tiny gradients take it too, finishing in double (see
// kTinyGrad); x < kFastLow, NaN x, and |grad_output| > kHugeGrad, infinite
// or NaN take the general path (NeedsGeneralPath).
// One formula for both signs, with E = e^x and A = 1 + x + E:
//   s'(x) = E*A / (1 + E)^2.
// E comes from a 32-entry table and a short polynomial:
//   x = k*ln2/32 + r',  k = 32m + j,  e^x = 2^m * T_j * e^(r' - delta_j)
// where T_j is 2^(j/32) rounded to float32 and delta_j = ln(T_j) - j*ln2/32
// (a per-slot correction, so the table entries carry no rounding error).
// With Ts = 2^m * T_j (exact) and em1 = e^r - 1 (|r| <= 0.0109):
//   E = Ts + Ts*em1,   A = ((1 + x) + Ts) + Ts*em1.
// Near the root x0 (s'(x0) = 0) both (1 + x) and (1 + x) + Ts are exact
// (Sterbenz), so A keeps its relative accuracy while it cancels, down to
// |A| ~ 3e-3; closer still (|x - x0| < kNearRoot) A comes from the
// expansion A = d*(-x0 + c*d*R(d)), d = x - x0, c = e^x0.
// The quotient carries the rounding errors of E*A, 1 + E, its square and of
// q = E*A * (1/(1+E)^2) as low parts (error-free products and sums), so the
// last FMA with grad_output is the only rounding not compensated. Every
// float32 input is checked against this by benchmarks/exhaustive_accuracy.cc.
// Below kFastLow the low parts of E*A and of the quotient would become
// subnormal (costly on x86, see TinyGrad), and s'(x) < 2^-42.6 there.
inline constexpr float kFastLow = -33.0f;
inline constexpr float kFastHigh = 24.0f;   // from here on grad_output * s'(x) rounds to grad_output
inline constexpr float kNearRoot = 0x1p-9f;  // |x - x0| below which the root expansion is used

// T_j = 2^(j/32) rounded to float32, stored with j*2^18 taken off its bits:
// V::AddExponent adds k*2^18 = m*2^23 + j*2^18 back, which also puts m in
// the exponent field.
JAS_TABLE float kExpTable[32] = {
    0x1.000000p+0f, 0x1.fd9b0ep-1f, 0x1.fb5586p-1f, 0x1.f9301ep-1f, 0x1.f72b84p-1f, 0x1.f54874p-1f,
    0x1.f387a6p-1f, 0x1.f1e9e0p-1f, 0x1.f06fe0p-1f, 0x1.ef1a74p-1f, 0x1.edea64p-1f, 0x1.ece086p-1f,
    0x1.ebfdaep-1f, 0x1.eb42b6p-1f, 0x1.eab07ep-1f, 0x1.ea47ecp-1f, 0x1.ea09e6p-1f, 0x1.e9f75ep-1f,
    0x1.ea1148p-1f, 0x1.ea589ap-1f, 0x1.eace54p-1f, 0x1.eb737cp-1f, 0x1.ec4918p-1f, 0x1.ed503cp-1f,
    0x1.ee89fap-1f, 0x1.eff770p-1f, 0x1.f199bep-1f, 0x1.f3720ep-1f, 0x1.f5818ep-1f, 0x1.f7c974p-1f,
    0x1.fa4afap-1f, 0x1.fd0766p-1f};
// delta_j = ln(T_j) - j*ln2/32.
JAS_TABLE float kExpTableDelta[32] = {
    0x0.0p+0f,        0x1.947416p-25f,  -0x1.8d96d4p-25f, 0x1.dda2fep-25f,  0x1.9c0c22p-27f,  0x1.a2fbb4p-25f,
    -0x1.964902p-25f, 0x1.2b0dbcp-25f,  -0x1.125002p-25f, 0x1.cde8cep-26f,  -0x1.370be4p-25f, -0x1.336de2p-30f,
    0x1.0a3552p-25f,  0x1.c541b6p-26f,  0x1.00d8acp-27f,  0x1.6cb284p-25f,  -0x1.26055cp-26f, -0x1.8b2bb8p-26f,
    0x1.05cb44p-25f,  0x1.1c2142p-26f,  -0x1.67a1cap-28f, 0x1.348e56p-25f,  -0x1.a3b5e4p-28f, 0x1.0b7ec8p-25f,
    0x1.f9c306p-27f,  0x1.e4c886p-26f,  0x1.6961b4p-28f,  0x1.b5151ep-28f,  0x1.a5217cp-28f,  0x1.ab7132p-26f,
    -0x1.61428ep-28f, 0x1.2ad5f8p-27f};

// E = e^x and A = 1 + x + E for x in [kFastLow, kFastHigh] (other lanes get
// values that the callers discard).
template <class V>
struct ExpAndA {
  typename V::F e, a;
};

template <class V>
JAS_HOST_DEVICE inline ExpAndA<V> ExpAndOnePlusXPlusExp(typename V::F x) {
  using F = typename V::F;
  const F shifter = V::Set(0x1.8p23f);
  // k = round(32x/ln2) in kf's low bits; V::Lookup32 and V::AddExponent read
  // j = k mod 32 and m = k div 32 from there.
  const F kf = V::Fma(x, V::Set(0x1.715476p+5f), shifter);
  const F k = V::Sub(kf, shifter);
  const F r1 = V::Fnma(k, V::Set(0x1.62e430p-6f), x);  // exact: ln2/32's high part has 20 bits
  // r = r1 - (k*ln2_lo + delta_j), rounded once.
  const F r = V::Sub(r1, V::Fma(k, V::Set(-0x1.05c610p-34f), V::Lookup32(kExpTableDelta, kf)));
  // e^r - 1 = r + r^2*(c0 + c1*r), minimax for |r| <= 0.011: error 2^-33.
  const F em1 = V::Fma(V::Mul(r, r), V::Fma(r, V::Set(0x1.5555d2p-3f), V::Set(0x1.00008cp-1f)), r);
  const F ts = V::AddExponent(V::Lookup32(kExpTable, kf), kf);
  const F one_plus_x = V::Add(V::Set(1.0f), x);
  return {V::Fma(ts, em1, ts), V::Fma(ts, em1, V::Add(one_plus_x, ts))};
}

// Lanes near the root, where A comes from NearRootA.
template <class V>
JAS_HOST_DEVICE inline typename V::M NearRootLanes(typename V::F x) {
  return V::Lt(V::Abs(V::Sub(x, V::Set(kRootHi))), V::Set(kNearRoot));
}

// A near the root, |x - x0| < kNearRoot: with t = x - hi (exact) and
// d = t - lo, A = d*B, B = -x0 + c*d*R(d) = -hi + b, b = c*d*R(d) - lo,
// R(d) = (e^d - 1 - d)/d^2 ~ 1/2 + d/6. A = t*(-hi) + (t*b - lo*B) keeps
// the big product exact inside the last FMA.
template <class V>
JAS_HOST_DEVICE inline typename V::F NearRootA(typename V::F x) {
  using F = typename V::F;
  const F t = V::Sub(x, V::Set(kRootHi));
  const F d = V::Sub(t, V::Set(kRootLo));
  const F b = V::Fma(V::Mul(V::Set(kC), d), V::Fma(d, V::Set(1.0f / 6.0f), V::Set(0.5f)), V::Set(-kRootLo));
  const F big_b = V::Sub(b, V::Set(kRootHi));
  return V::Fma(t, V::Set(-kRootHi), V::Fms(t, b, V::Mul(V::Set(kRootLo), big_b)));
}

// Which NaN an operation returns when several meet depends on operand order,
// which compilers pick freely: NaN results are given one bit pattern.
template <class V>
JAS_HOST_DEVICE inline typename V::F CanonicalNan(typename V::F r) {
  return V::Select(V::IsNan(r), V::Set(__builtin_nanf("")), r);
}

// |grad_output| above which g*s'(x) (s' < 1.1) can come near float32's
// overflow threshold: whether it rounds to the largest float or to inf then
// depends on s'(x) to far more than float32 precision, so such lanes take
// the general path, which computes s'(x) in double.
inline constexpr float kHugeGrad = 0x1p127f;

// Lanes for the general path: x < kFastLow or NaN (Nle is true for
// unordered operands), and |grad_output| > kHugeGrad, infinite or NaN.
// Takes |grad_output|.
template <class V>
JAS_HOST_DEVICE inline typename V::M NeedsGeneralPath(typename V::F abs_go, typename V::F x) {
  return V::Or(V::Nle(V::Set(kFastLow), x), V::Nle(abs_go, V::Set(kHugeGrad)));
}

// Subnormal floats: on x86 a float operation whose result or operand is
// subnormal (unless exact) takes a microcode assist of ~100 cycles, several
// times the cost of a whole vector of normal values (scaling such an
// operand by a power of two is no way out: that multiply is itself slow).
// Lanes with 0 < |grad_output| < kTinyGrad, where g*s'(x) or g*lo may be
// subnormal (s'(x) >= 2^-42.6 on the fast path, so other lanes' products
// stay above 2^-86), finish in double instead: float <-> double
// conversions take subnormals at full speed, and the conversion back is
// the one rounding, gradual underflow included.
inline constexpr float kTinyGrad = 0x1p-43f;

// Takes |grad_output|.
template <class V>
JAS_HOST_DEVICE inline typename V::M TinyGrad(typename V::F abs_go) {
  return V::And(V::Lt(abs_go, V::Set(kTinyGrad)), V::Gt(abs_go, V::Set(0.0f)));
}

}  // namespace jas::math

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_FAST_H_
