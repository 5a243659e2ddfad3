// The vector-ops interface of silu_grad_math.h on AVX2 + FMA + F16C (8 lanes).
// Include only from a translation unit compiled with those instructions enabled.
#ifndef JAX_ASCEND_SILU_KERNEL_CPU_SIMD_AVX2_H_
#define JAX_ASCEND_SILU_KERNEL_CPU_SIMD_AVX2_H_

#include <immintrin.h>

#include <cstdint>

namespace jas::simd {

struct Avx2 {
  using F = __m256;
  using M = __m256;
  using D = __m256d;
  static constexpr int kLanes = 8;
  static constexpr int kHalves = 2;

  static F Set(float v) { return _mm256_set1_ps(v); }
  static F Load(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, F v) { _mm256_storeu_ps(p, v); }
  // Non-temporal stores, as in simd_avx512.h.
  static constexpr int kStreamAlign = 32;
  static void StoreStream(float* p, F v) { _mm256_stream_ps(p, v); }
  static void StreamFence() { _mm_sfence(); }
  static F LoadF16(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static __m128i ToF16(F v) { return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static void StoreF16(uint16_t* p, F v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), ToF16(v)); }
  static void StoreF16Stream(uint16_t* p, F v) { _mm_stream_si128(reinterpret_cast<__m128i*>(p), ToF16(v)); }
  static F LoadBF16(const uint16_t* p) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  }
  static __m128i ToBF16(F v) {
    const __m256i u = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb), 16);
    const __m256i quiet_nan = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
    const __m256 is_nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    r = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(r), _mm256_castsi256_ps(quiet_nan), is_nan));
    r = _mm256_and_si256(r, _mm256_set1_epi32(0xffff));
    // Pack 8 x u32 -> 8 x u16 (packus works per 128-bit lane; fix the order).
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    return _mm256_castsi256_si128(packed);
  }
  static void StoreBF16(uint16_t* p, F v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), ToBF16(v)); }
  static void StoreBF16Stream(uint16_t* p, F v) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(p), ToBF16(v));
  }

  static F Add(F a, F b) { return _mm256_add_ps(a, b); }
  static F Sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F Mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F Div(F a, F b) { return _mm256_div_ps(a, b); }
  static F Fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F Fms(F a, F b, F c) { return _mm256_fmsub_ps(a, b, c); }
  static F Fnma(F a, F b, F c) { return _mm256_fnmadd_ps(a, b, c); }
  static F Neg(F a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }
  static F Abs(F a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static F Min(F a, F b) { return _mm256_min_ps(a, b); }
  static F Max(F a, F b) { return _mm256_max_ps(a, b); }
  static F Round(F a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static M Lt(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static M Eq(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
  static M Gt(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  // The bit patterns as 32-bit integers: their sum, and signed a > b.
  static F AddBits(F a, F b) {
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(a), _mm256_castps_si256(b)));
  }
  static M GtBits(F a, F b) {
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_castps_si256(a), _mm256_castps_si256(b)));
  }
  static M IsNan(F a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
  static M Nle(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_NLE_UQ); }
  static M Or(M a, M b) { return _mm256_or_ps(a, b); }
  static M And(M a, M b) { return _mm256_and_ps(a, b); }
  static bool Any(M m) { return _mm256_movemask_ps(m) != 0; }
  static F Select(M m, F a, F b) { return _mm256_blendv_ps(b, a, m); }

  static D LoadD(const double* p) { return _mm256_loadu_pd(p); }
  static void StoreD(double* p, D v) { _mm256_storeu_pd(p, v); }
  static D SetD(double v) { return _mm256_set1_pd(v); }
  static D Widen(F v, int half) {
    return _mm256_cvtps_pd(half == 0 ? _mm256_castps256_ps128(v) : _mm256_extractf128_ps(v, 1));
  }
  static F Narrow(const D* halves) {
    return _mm256_set_m128(_mm256_cvtpd_ps(halves[1]), _mm256_cvtpd_ps(halves[0]));
  }
  static D AddD(D a, D b) { return _mm256_add_pd(a, b); }
  static D MulD(D a, D b) { return _mm256_mul_pd(a, b); }
  static D FmaD(D a, D b, D c) { return _mm256_fmadd_pd(a, b, c); }
  static D NegD(D a) { return _mm256_xor_pd(a, _mm256_set1_pd(-0.0)); }
  // silu_grad_fast.h's exp table as its two factors (LookUpExpSlot): a
  // 32-entry lookup would take four permutes and three blends.
  static constexpr bool kFactoredExpTable = true;
  // table[bits of i mod 8]: one vpermps, whose table operand may stay in memory.
  static F Lookup8(const float* table, F i) {
    return _mm256_permutevar8x32_ps(_mm256_loadu_ps(table), _mm256_castps_si256(i));
  }
  // v's bits shifted right by n, as an integer.
  static F ShiftRightBits(F v, int n) { return _mm256_castsi256_ps(_mm256_srli_epi32(_mm256_castps_si256(v), n)); }
  // t's bits plus v's bits shifted left by n.
  static F AddShiftedBits(F t, F v, int n) {
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(t), _mm256_slli_epi32(_mm256_castps_si256(v), n)));
  }

  static F ScaleByPow2(F p, F n) {
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i n1 = _mm256_srai_epi32(ni, 1);
    const __m256i n2 = _mm256_sub_epi32(ni, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    const F s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const F s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  }
};

}  // namespace jas::simd

#endif  // JAX_ASCEND_SILU_KERNEL_CPU_SIMD_AVX2_H_
