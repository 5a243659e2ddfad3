// The vector-ops interface of silu_grad_math.h on AVX-512F (16 lanes).
// Include only from a translation unit compiled with AVX-512F enabled.
#ifndef JAX_ASCEND_SILU_KERNEL_CPU_SIMD_AVX512_H_
#define JAX_ASCEND_SILU_KERNEL_CPU_SIMD_AVX512_H_

#include <immintrin.h>

#include <cstdint>

namespace jas::simd {

struct Avx512 {
  using F = __m512;
  using M = __mmask16;
  using D = __m512d;
  static constexpr int kLanes = 16;
  static constexpr int kHalves = 2;

  static F Set(float v) { return _mm512_set1_ps(v); }
  static F Load(const float* p) { return _mm512_loadu_ps(p); }
  static void Store(float* p, F v) { _mm512_storeu_ps(p, v); }
  // Non-temporal stores (p aligned to kStreamAlign): the line goes to memory
  // without first being read into the cache. StreamFence orders them before
  // the stores that publish the work as done.
  static constexpr int kStreamAlign = 64;
  static void StoreStream(float* p, F v) { _mm512_stream_ps(p, v); }
  static void StreamFence() { _mm_sfence(); }
  static F LoadF16(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static __m256i ToF16(F v) { return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static void StoreF16(uint16_t* p, F v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), ToF16(v)); }
  static void StoreF16Stream(uint16_t* p, F v) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(p), ToF16(v));
  }
  static F LoadBF16(const uint16_t* p) {
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
  }
  static __m256i ToBF16(F v) {
    const __m512i u = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    const __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb), 16);
    const __m512i quiet_nan = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
    const __mmask16 is_nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    const __m512i out = _mm512_mask_blend_epi32(is_nan, r, quiet_nan);
    return _mm512_cvtepi32_epi16(out);
  }
  static void StoreBF16(uint16_t* p, F v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), ToBF16(v)); }
  static void StoreBF16Stream(uint16_t* p, F v) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(p), ToBF16(v));
  }

  static F Add(F a, F b) { return _mm512_add_ps(a, b); }
  static F Sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static F Mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F Div(F a, F b) { return _mm512_div_ps(a, b); }
  static F Fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F Fms(F a, F b, F c) { return _mm512_fmsub_ps(a, b, c); }
  static F Fnma(F a, F b, F c) { return _mm512_fnmadd_ps(a, b, c); }
  static F Neg(F a) {
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32(INT32_MIN)));
  }
  static F Abs(F a) {
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(0x7fffffff)));
  }
  static F Min(F a, F b) { return _mm512_min_ps(a, b); }
  static F Max(F a, F b) { return _mm512_max_ps(a, b); }
  static F Round(F a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static M Lt(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M Eq(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  static M Gt(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  // The bit patterns as 32-bit integers: their sum, and signed a > b.
  static F AddBits(F a, F b) {
    return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(a), _mm512_castps_si512(b)));
  }
  static M GtBits(F a, F b) { return _mm512_cmpgt_epi32_mask(_mm512_castps_si512(a), _mm512_castps_si512(b)); }
  static M IsNan(F a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
  static M Nle(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_NLE_UQ); }
  static M Or(M a, M b) { return _kor_mask16(a, b); }
  static M And(M a, M b) { return _kand_mask16(a, b); }
  static bool Any(M m) { return m != 0; }
  static F Select(M m, F a, F b) { return _mm512_mask_blend_ps(m, b, a); }

  static D LoadD(const double* p) { return _mm512_loadu_pd(p); }
  static void StoreD(double* p, D v) { _mm512_storeu_pd(p, v); }
  static D SetD(double v) { return _mm512_set1_pd(v); }
  static D Widen(F v, int half) {
    const __m256 part = half == 0 ? _mm512_castps512_ps256(v)
                                  : _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    return _mm512_cvtps_pd(part);
  }
  static F Narrow(const D* halves) {
    const __m256 lo = _mm512_cvtpd_ps(halves[0]), hi = _mm512_cvtpd_ps(halves[1]);
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)),
                                               _mm256_castps_pd(hi), 1));
  }
  static D AddD(D a, D b) { return _mm512_add_pd(a, b); }
  static D MulD(D a, D b) { return _mm512_mul_pd(a, b); }
  static D FmaD(D a, D b, D c) { return _mm512_fmadd_pd(a, b, c); }
  static D NegD(D a) {
    return _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(a), _mm512_set1_epi64(INT64_MIN)));
  }
  // table[k mod 32] for the k held in kf's low bits (silu_grad_fast.h's kExpTables).
  static F Lookup32(const float* table, F kf) {
    return _mm512_permutex2var_ps(_mm512_loadu_ps(table), _mm512_castps_si512(kf), _mm512_loadu_ps(table + 16));
  }
  // Adds k*2^18 to t's bits, k in kf's low bits (kf = k + 1.5*2^23; shifted
  // left by 18, the shifter's own bits leave the word). For the tables of
  // silu_grad_fast.h that is t_j * 2^(k div 32).
  static F AddExponent(F t, F kf) {
    return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(t), _mm512_slli_epi32(_mm512_castps_si512(kf), 18)));
  }

  static F ScaleByPow2(F p, F n) {
    const __m512i ni = _mm512_cvtps_epi32(n);
    const __m512i n1 = _mm512_srai_epi32(ni, 1);
    const __m512i n2 = _mm512_sub_epi32(ni, n1);
    const __m512i bias = _mm512_set1_epi32(127);
    const F s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, bias), 23));
    const F s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, bias), 23));
    return _mm512_mul_ps(_mm512_mul_ps(p, s1), s2);
  }
};

}  // namespace jas::simd

#endif  // JAX_ASCEND_SILU_KERNEL_CPU_SIMD_AVX512_H_
