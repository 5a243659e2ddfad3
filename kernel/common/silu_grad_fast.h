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
// grad_output exactly) for every grad_output: tiny, huge, infinite or NaN
// ones finish the product in double (kTinyGrad, kHugeGrad, in
// silu_grad_f32.h's GradF32Rare); x < kFastLow and NaN x take the general
// path.
// One formula for both signs, with E = e^x and A = 1 + x + E:
//   s'(x) = E*A / (1 + E)^2.
// E comes from a 32-entry table and a short polynomial:
//   x = k*ln2/32 + r',  k = 32m + j,  e^x = 2^m * T_j * e^(r' - delta_j)
// where T_j is within 2^-11.8 of 2^(j/32) and exact in float32, and
// delta_j = ln(T_j) - j*ln2/32 (a per-slot correction folded into r, so the
// entries need not be the rounded powers). T_j = P_i * Q_l for j = 8i + l,
// with P_i ~ 2^(i/4) of 11 significant bits and Q_l ~ 2^(l/32) of 13, so
// every product is exact, and delta_j = dP_i + dQ_l rounded once: ISAs
// without a cheap 32-entry permute (AVX2) look up the two factors instead,
// and get the same bits as those that read the products (kExpTables).
// With Ts = 2^m * T_j (exact) and em1 = e^r - 1 (|r| <= 0.01111):
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

// The factors, chosen (rounded up or down) for the smallest max |delta_j|:
// 2^-11.85, which bounds |r| by ln2/64 + 2^-11.85 < 0.01111.
inline constexpr float kExpP[4] = {0x1.000000p+0f, 0x1.308000p+0f, 0x1.6a0000p+0f, 0x1.ae8000p+0f};
inline constexpr float kExpQ[8] = {0x1.000000p+0f, 0x1.059000p+0f, 0x1.0b5000p+0f, 0x1.113000p+0f,
                                   0x1.172000p+0f, 0x1.1d4000p+0f, 0x1.238000p+0f, 0x1.29e000p+0f};
// dP_i = ln(P_i) - i*ln2/4 and dQ_l = ln(Q_l) - l*ln2/32, rounded to float32.
inline constexpr float kExpDeltaP[4] = {0x0.0p+0f, 0x1.b1ca6cp-13f, -0x1.c00c40p-14f, -0x1.7b9c1cp-14f};
inline constexpr float kExpDeltaQ[8] = {0x0.0p+0f,        -0x1.5a1984p-13f, -0x1.52b878p-14f, -0x1.b2dfdcp-20f,
                                        -0x1.51eb06p-13f, -0x1.e54ad4p-14f, -0x1.ae102ap-14f, -0x1.0f7c86p-13f};

// v with `off` taken off its bits: a table entry that V::AddExponent (or the
// factored lookup's exponent step) turns back into v * 2^m.
constexpr float TakeOffBits(float v, unsigned off) {
  return __builtin_bit_cast(float, __builtin_bit_cast(unsigned, v) - off);
}

// The tables the lookups read, derived from the factors above:
//   t[j] = P_i * Q_l with j*2^18 taken off its bits: V::AddExponent adds
//          k*2^18 = m*2^23 + j*2^18 back, which also puts m in the exponent;
//   delta[j] = dP_i + dQ_l;
//   p[i] = P_i with i*2^21 taken off its bits: adding (k >> 3)*2^21 =
//          m*2^23 + i*2^21 back gives P_i * 2^m;
//   delta_p[i] = dP_i;
// p and delta_p twice over, so that the factored lookup indexes all four
// tables with 3 bits (k >> 3 = 4m + i: i and i + 4 hold the same entry).
struct ExpTables {
  float t[32], delta[32], p[8], delta_p[8];
};
constexpr ExpTables MakeExpTables() {
  ExpTables e{};
  for (int j = 0; j < 32; ++j) {
    e.t[j] = TakeOffBits(kExpP[j >> 3] * kExpQ[j & 7], static_cast<unsigned>(j) << 18);
    e.delta[j] = kExpDeltaP[j >> 3] + kExpDeltaQ[j & 7];
  }
  for (int i = 0; i < 8; ++i) {
    e.p[i] = TakeOffBits(kExpP[i & 3], static_cast<unsigned>(i & 3) << 21);
    e.delta_p[i] = kExpDeltaP[i & 3];
  }
  return e;
}
JAS_TABLE ExpTables kExpTables = MakeExpTables();

// 2^m * T_j and delta_j for k = 32m + j held in kf's low bits.
template <class V>
struct ExpSlot {
  typename V::F ts, delta;
};

template <class V>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE ExpSlot<V> LookUpExpSlot(typename V::F kf) {
  if constexpr (requires { requires V::kFactoredExpTable; }) {
    // V::Lookup8(table, v) reads table[bits of v mod 8]. Shifted right by 3,
    // kf holds 4m + i.
    using F = typename V::F;
    const F k8 = V::ShiftRightBits(kf, 3);
    const F p = V::AddShiftedBits(V::Lookup8(kExpTables.p, k8), k8, 21);
    return {V::Mul(p, V::Lookup8(kExpQ, kf)), V::Add(V::Lookup8(kExpTables.delta_p, k8), V::Lookup8(kExpDeltaQ, kf))};
  } else {
    return {V::AddExponent(V::Lookup32(kExpTables.t, kf), kf), V::Lookup32(kExpTables.delta, kf)};
  }
}

// e^x = ts + ts*em1 for x in [kFastLow, kFastHigh]: ts = 2^m * T_j (exact)
// and em1 = e^r - 1 (other lanes get values that the callers discard).
template <class V>
struct ExpTerms {
  typename V::F ts, em1;
};

template <class V>
JAS_HOST_DEVICE inline ExpTerms<V> ExpTermsOf(typename V::F x) {
  using F = typename V::F;
  const F shifter = V::Set(0x1.8p23f);
  // k = round(32x/ln2) in kf's low bits, where LookUpExpSlot reads j = k
  // mod 32 and m = k div 32.
  const F kf = V::Fma(x, V::Set(0x1.715476p+5f), shifter);
  const F k = V::Sub(kf, shifter);
  const F r1 = V::Fnma(k, V::Set(0x1.62e430p-6f), x);  // exact: ln2/32's high part has 20 bits
  const ExpSlot<V> slot = LookUpExpSlot<V>(kf);
  // r = r1 - (k*ln2_lo + delta_j), rounded once.
  const F r = V::Sub(r1, V::Fma(k, V::Set(-0x1.05c610p-34f), slot.delta));
  // e^r - 1 = r + r^2*(c0 + c1*r), minimax for |r| <= 0.01111: error 2^-33.
  return {slot.ts, V::Fma(V::Mul(r, r), V::Fma(r, V::Set(0x1.55558ep-3f), V::Set(0x1.00009p-1f)), r)};
}

// E = e^x and A = 1 + x + E for x in [kFastLow, kFastHigh] (other lanes get
// values that the callers discard).
template <class V>
struct ExpAndA {
  typename V::F e, a;
};

template <class V>
JAS_HOST_DEVICE inline ExpAndA<V> ExpAndAFrom(typename V::F x, ExpTerms<V> t) {
  const typename V::F one_plus_x = V::Add(V::Set(1.0f), x);
  return {V::Fma(t.ts, t.em1, t.ts), V::Fma(t.ts, t.em1, V::Add(one_plus_x, t.ts))};
}

template <class V>
JAS_HOST_DEVICE inline ExpAndA<V> ExpAndOnePlusXPlusExp(typename V::F x) {
  return ExpAndAFrom<V>(x, ExpTermsOf<V>(x));
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
// s'(x) in double (TimesDerivativeWide).
inline constexpr float kHugeGrad = 0x1p127f;

// Lanes the fast path hands to GradF32Rare whatever their A: x < kFastLow
// or NaN (Nle is true for unordered operands), and |grad_output| >
// kHugeGrad, infinite or NaN. Takes |grad_output|.
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

// Takes |grad_output|. Where V compares integers (the CPU ISAs), in one
// comparison: adding 2^31 - 1 to the bit pattern maps 0 to the largest
// signed integer and 1 .. bits(kTinyGrad) - 1 to the smallest ones.
template <class V>
JAS_HOST_DEVICE inline typename V::M TinyGrad(typename V::F abs_go) {
  if constexpr (requires { V::GtBits(abs_go, abs_go); }) {
    constexpr unsigned kTinyBits = __builtin_bit_cast(unsigned, kTinyGrad);
    const typename V::F moved = V::AddBits(abs_go, V::Set(__builtin_bit_cast(float, 0x7fffffffu)));
    return V::GtBits(V::Set(__builtin_bit_cast(float, 0x80000000u + (kTinyBits - 1))), moved);
  } else {
    return V::And(V::Lt(abs_go, V::Set(kTinyGrad)), V::Gt(abs_go, V::Set(0.0f)));
  }
}

}  // namespace jas::math

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_SILU_GRAD_FAST_H_
