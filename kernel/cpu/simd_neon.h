// The vector-ops interface of silu_grad_math.h on AArch64 Advanced SIMD
// (NEON, 4 lanes), which every AArch64 processor has. Each operation does per
// lane what the x86 versions do, bit for bit. Where NEON's own instruction
// has other semantics it is not used: FMIN/FMAX return a NaN operand and
// order -0 below +0, whereas minps/maxps return the second operand in both
// cases, so Min/Max are a compare and a select. FNEG/FABS are plain sign-bit
// operations only while FPCR.AH is clear, which kernel/cpu/run.cc ensures
// with the rest of the float environment.
// Include only from a translation unit compiled for little-endian AArch64
// (Lookup32 numbers the bytes of a lane from its low end).
#ifndef JAX_ASCEND_SILU_KERNEL_CPU_SIMD_NEON_H_
#define JAX_ASCEND_SILU_KERNEL_CPU_SIMD_NEON_H_

#include <arm_neon.h>

#include <cstdint>

namespace jas::simd {

struct Neon {
  using F = float32x4_t;
  using M = uint32x4_t;
  using D = float64x2_t;
  static constexpr int kLanes = 4;
  static constexpr int kHalves = 2;

  static F Set(float v) { return vdupq_n_f32(v); }
  static F Load(const float* p) { return vld1q_f32(p); }
  static void Store(float* p, F v) { vst1q_f32(p, v); }
  // FCVTL/FCVTN round to nearest even and quiet a NaN keeping its payload's
  // top bits, as vcvtph2ps/vcvtps2ph do (FPCR.AHP and FPCR.DN clear).
  static F LoadF16(const uint16_t* p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
  static void StoreF16(uint16_t* p, F v) { vst1_u16(p, vreinterpret_u16_f16(vcvt_f16_f32(v))); }
  static F LoadBF16(const uint16_t* p) { return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16)); }
  // Round to nearest even on the bits: (u + 0x7fff + lsb) >> 16, the add and
  // the narrowing in one ADDHN; a NaN keeps its top half, quieted.
  static void StoreBF16(uint16_t* p, F v) {
    const uint32x4_t u = vreinterpretq_u32_f32(v);
    const uint32x4_t round = vsraq_n_u32(vdupq_n_u32(0x7fff), vshlq_n_u32(u, 15), 31);  // 0x7fff + lsb
    const uint16x4_t r = vaddhn_u32(u, round);
    const uint16x4_t quiet_nan = vorr_u16(vshrn_n_u32(u, 16), vdup_n_u16(0x40));
    vst1_u16(p, vbsl_u16(vmovn_u32(IsNan(v)), quiet_nan, r));
  }

  static F Add(F a, F b) { return vaddq_f32(a, b); }
  static F Sub(F a, F b) { return vsubq_f32(a, b); }
  static F Mul(F a, F b) { return vmulq_f32(a, b); }
  static F Div(F a, F b) { return vdivq_f32(a, b); }
  static F Fma(F a, F b, F c) { return vfmaq_f32(c, a, b); }
  // a*b + (-c), one rounding: the same zero signs as x86's a*b - c (FMLS
  // would give c - a*b, whose negation turns an exact +0 into -0).
  static F Fms(F a, F b, F c) { return vfmaq_f32(vnegq_f32(c), a, b); }
  static F Fnma(F a, F b, F c) { return vfmsq_f32(c, a, b); }  // FMLS: (-a)*b + c
  static F Neg(F a) { return vnegq_f32(a); }
  static F Abs(F a) { return vabsq_f32(a); }
  static F Min(F a, F b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
  static F Max(F a, F b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
  static F Round(F a) { return vrndnq_f32(a); }
  static M Lt(F a, F b) { return vcltq_f32(a, b); }
  static M Eq(F a, F b) { return vceqq_f32(a, b); }
  static M Gt(F a, F b) { return vcgtq_f32(a, b); }
  // The bit patterns as 32-bit integers: their sum, and signed a > b.
  static F AddBits(F a, F b) {
    return vreinterpretq_f32_u32(vaddq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b)));
  }
  static M GtBits(F a, F b) { return vcgtq_s32(vreinterpretq_s32_f32(a), vreinterpretq_s32_f32(b)); }
  static M IsNan(F a) { return vmvnq_u32(vceqq_f32(a, a)); }
  static M Nle(F a, F b) { return vmvnq_u32(vcleq_f32(a, b)); }
  static M Or(M a, M b) { return vorrq_u32(a, b); }
  static M And(M a, M b) { return vandq_u32(a, b); }
  static bool Any(M m) { return vmaxvq_u32(m) != 0; }
  static F Select(M m, F a, F b) { return vbslq_f32(m, a, b); }

  static D LoadD(const double* p) { return vld1q_f64(p); }
  static void StoreD(double* p, D v) { vst1q_f64(p, v); }
  static D SetD(double v) { return vdupq_n_f64(v); }
  static D Widen(F v, int half) { return half == 0 ? vcvt_f64_f32(vget_low_f32(v)) : vcvt_high_f64_f32(v); }
  static F Narrow(const D* halves) { return vcvt_high_f32_f64(vcvt_f32_f64(halves[0]), halves[1]); }
  static D AddD(D a, D b) { return vaddq_f64(a, b); }
  static D MulD(D a, D b) { return vmulq_f64(a, b); }
  static D FmaD(D a, D b, D c) { return vfmaq_f64(c, a, b); }
  static D NegD(D a) { return vnegq_f64(a); }

  // table[k mod 32] for the k held in kf's low bits (silu_grad_fast.h's
  // kExpTables): byte lookups over the 128-byte table, the first 64 bytes with
  // TBL, the rest with TBX (whose out-of-range indices keep what TBL found).
  static F Lookup32(const float* table, F kf) {
    const uint32x4_t j = vandq_u32(vreinterpretq_u32_f32(kf), vdupq_n_u32(31));
    // Lane bytes 4j, 4j+1, 4j+2, 4j+3 (little-endian).
    const uint8x16_t idx = vreinterpretq_u8_u32(vmlaq_u32(vdupq_n_u32(0x03020100u), j, vdupq_n_u32(0x04040404u)));
    const uint8_t* bytes = reinterpret_cast<const uint8_t*>(table);
    const uint8x16_t lo = vqtbl4q_u8(vld1q_u8_x4(bytes), idx);
    return vreinterpretq_f32_u8(vqtbx4q_u8(lo, vld1q_u8_x4(bytes + 64), veorq_u8(idx, vdupq_n_u8(64))));
  }
  // Adds k*2^18 to t's bits, k in kf's low bits (see simd_avx512.h).
  static F AddExponent(F t, F kf) {
    return vreinterpretq_f32_u32(vaddq_u32(vreinterpretq_u32_f32(t), vshlq_n_u32(vreinterpretq_u32_f32(kf), 18)));
  }

  // n is integral (or NaN, when p is NaN too: x86 then converts to INT32_MIN,
  // NEON to 0, and both give scale factors of 1).
  static F ScaleByPow2(F p, F n) {
    const int32x4_t ni = vcvtnq_s32_f32(n);
    const int32x4_t n1 = vshrq_n_s32(ni, 1);
    const int32x4_t n2 = vsubq_s32(ni, n1);
    const int32x4_t bias = vdupq_n_s32(127);
    const F s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, bias), 23));
    const F s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, bias), 23));
    return vmulq_f32(vmulq_f32(p, s1), s2);
  }
};

}  // namespace jas::simd

#endif  // JAX_ASCEND_SILU_KERNEL_CPU_SIMD_NEON_H_
