// The vector-ops interface of silu_grad_math.h with one lane: portable C++
// for any processor. Operation for operation it matches the x86 SIMD versions.
#ifndef JAX_ASCEND_SILU_KERNEL_CPU_SIMD_SCALAR_H_
#define JAX_ASCEND_SILU_KERNEL_CPU_SIMD_SCALAR_H_

#include <cmath>
#include <cstdint>
#include <cstring>

#include "common/half.h"
#include "common/host_device.h"

namespace jas::simd {

struct Scalar {
  using F = float;
  using M = bool;
  using D = double;
  static constexpr int kLanes = 1;
  static constexpr int kHalves = 1;  // one double "half" holds the one lane

  static F Set(float v) { return v; }
  static F Load(const float* p) { return *p; }
  static void Store(float* p, F v) { *p = v; }
  static F LoadF16(const uint16_t* p) { return half::F16ToFloat(*p); }
  static void StoreF16(uint16_t* p, F v) { *p = half::FloatToF16(v); }
  static F LoadBF16(const uint16_t* p) { return half::BF16ToFloat(*p); }
  static void StoreBF16(uint16_t* p, F v) { *p = half::FloatToBF16(v); }

  static F Add(F a, F b) { return a + b; }
  static F Sub(F a, F b) { return a - b; }
  static F Mul(F a, F b) { return a * b; }
  static F Div(F a, F b) { return a / b; }
  static F Fma(F a, F b, F c) { return FusedMulAdd(a, b, c); }
  static F Fms(F a, F b, F c) { return FusedMulAdd(a, b, -c); }
  static F Fnma(F a, F b, F c) { return FusedMulAdd(-a, b, c); }
  static F Neg(F a) { return half::FromBits(half::Bits(a) ^ 0x80000000u); }
  static F Abs(F a) { return half::FromBits(half::Bits(a) & 0x7fffffffu); }
  // x86 semantics: the second operand when either is NaN.
  static F Min(F a, F b) { return a < b ? a : b; }
  static F Max(F a, F b) { return a > b ? a : b; }
  static F Round(F a) { return std::nearbyint(a); }
  static M Lt(F a, F b) { return a < b; }
  static M Eq(F a, F b) { return a == b; }
  static M Gt(F a, F b) { return a > b; }
  // The bit patterns as 32-bit integers: their sum, and signed a > b.
  static F AddBits(F a, F b) { return half::FromBits(half::Bits(a) + half::Bits(b)); }
  static M GtBits(F a, F b) { return static_cast<int32_t>(half::Bits(a)) > static_cast<int32_t>(half::Bits(b)); }
  static M IsNan(F a) { return a != a; }
  static M Nle(F a, F b) { return !(a <= b); }
  static M Or(M a, M b) { return a || b; }
  static M And(M a, M b) { return a && b; }
  static bool Any(M m) { return m; }
  static F Select(M m, F a, F b) { return m ? a : b; }

  static D LoadD(const double* p) { return *p; }
  static void StoreD(double* p, D v) { *p = v; }
  static D SetD(double v) { return v; }
  static D Widen(F v, int) { return v; }
  static F Narrow(const D* halves) { return static_cast<float>(halves[0]); }
  static D AddD(D a, D b) { return a + b; }
  static D MulD(D a, D b) { return a * b; }
  static D FmaD(D a, D b, D c) { return std::fma(a, b, c); }
  static D NegD(D a) { return -a; }
  // table[k mod 32] for the k held in kf's low bits (silu_grad_fast.h's kExpTables).
  static F Lookup32(const float* table, F kf) { return table[half::Bits(kf) & 31u]; }
  // Adds k*2^18 to t's bits, k in kf's low bits (see simd_avx512.h).
  static F AddExponent(F t, F kf) { return half::FromBits(half::Bits(t) + (half::Bits(kf) << 18)); }

  // a*b + c rounded once, as the FMA instruction of the vector paths gives
  // it. Without one (this file serves x86 processors that lack FMA) std::fma
  // is a slow library routine; instead a*b is formed exactly in double (24 +
  // 24 significant bits) and added to c there. That sum is rounded too, which
  // changes the float result only where it lands exactly halfway between two
  // floats, or where the result is below float's normal range (fewer bits
  // kept): those sums are redone rounded to odd, and a sum rounded to odd
  // with 2 or more bits to spare rounds to nearest as if rounded once.
  static JAS_ALWAYS_INLINE F FusedMulAdd(F a, F b, F c) {
#if defined(__FP_FAST_FMAF)
    return std::fma(a, b, c);
#else
    const double p = double{a} * double{b};
    const double s = p + double{c};
    uint64_t bits;
    std::memcpy(&bits, &s, sizeof bits);
    const uint64_t exponent = (bits >> 52) & 0x7ff;
    // 29 = 52 - 23 bits dropped by a conversion to a normal float; the
    // exponent of float's smallest normal (2^-126) is 1023 - 126, 0x7ff
    // that of infinities and NaN.
    constexpr uint64_t kDropped = (uint64_t{1} << 29) - 1, kHalfway = uint64_t{1} << 28;
    constexpr uint64_t kMinNormal = 1023 - 126;
    if ((exponent - kMinNormal < 0x7ff - kMinNormal && (bits & kDropped) != kHalfway) || exponent == 0x7ff) {
      return static_cast<float>(s);
    }
    return RoundedToOdd(p, double{c}, s);
#endif
  }
  // p + c (finite, s = p + c rounded to nearest) rounded to odd, then to float.
  static JAS_NOINLINE F RoundedToOdd(double p, double c, double s) {
    // s + err = p + c exactly (TwoSum; no overflow: |p|, |c| < 2^256).
    const double pv = s - c;
    const double err = (p - pv) + (c - (s - pv));
    uint64_t bits;
    std::memcpy(&bits, &s, sizeof bits);
    if (err != 0.0 && (bits & 1) == 0) bits += (err > 0.0) == (s > 0.0) ? 1 : uint64_t(-1);
    double odd;
    std::memcpy(&odd, &bits, sizeof odd);
    return static_cast<float>(odd);
  }

  // p * 2^n for integral n in [-201, 68], in two steps so each factor is normal.
  static F ScaleByPow2(F p, F n) {
    if (n != n) return p;  // NaN input: p is NaN already
    const int32_t ni = static_cast<int32_t>(n);
    const int32_t n1 = ni >> 1;
    const int32_t n2 = ni - n1;
    const F s1 = half::FromBits(static_cast<uint32_t>(n1 + 127) << 23);
    const F s2 = half::FromBits(static_cast<uint32_t>(n2 + 127) << 23);
    return (p * s1) * s2;
  }
};

}  // namespace jas::simd

#endif  // JAX_ASCEND_SILU_KERNEL_CPU_SIMD_SCALAR_H_
