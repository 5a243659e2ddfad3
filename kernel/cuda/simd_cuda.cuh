// The vector-ops interface of silu_grad_math.h for one CUDA thread (one lane).
// Every operation is an explicitly rounded intrinsic (__fadd_rn, __fmaf_rn,
// ...), which the compiler never fuses or reorders, so a GPU thread executes
// exactly the IEEE operations the CPU ISAs do for the same formula (where the
// two kernels' results may still differ: silu_grad_cuda.h). Device code only.
#ifndef JAX_ASCEND_SILU_KERNEL_CUDA_SIMD_CUDA_CUH_
#define JAX_ASCEND_SILU_KERNEL_CUDA_SIMD_CUDA_CUH_

#include <cstdint>

namespace jas::simd {

struct CudaLane {
  using F = float;
  using M = bool;
  using D = double;
  static constexpr int kLanes = 1;
  static constexpr int kHalves = 1;

  __device__ static F Set(float v) { return v; }

  __device__ static F Add(F a, F b) { return __fadd_rn(a, b); }
  __device__ static F Sub(F a, F b) { return __fsub_rn(a, b); }
  __device__ static F Mul(F a, F b) { return __fmul_rn(a, b); }
  __device__ static F Div(F a, F b) { return __fdiv_rn(a, b); }
  __device__ static F Fma(F a, F b, F c) { return __fmaf_rn(a, b, c); }
  __device__ static F Fms(F a, F b, F c) { return __fmaf_rn(a, b, Neg(c)); }
  __device__ static F Fnma(F a, F b, F c) { return __fmaf_rn(Neg(a), b, c); }
  __device__ static F Neg(F a) { return __uint_as_float(__float_as_uint(a) ^ 0x80000000u); }
  __device__ static F Abs(F a) { return __uint_as_float(__float_as_uint(a) & 0x7fffffffu); }
  // x86 semantics (the second operand when either is NaN), as simd_scalar.h.
  __device__ static F Min(F a, F b) { return a < b ? a : b; }
  __device__ static F Max(F a, F b) { return a > b ? a : b; }
  __device__ static F Round(F a) { return rintf(a); }  // to nearest even
  __device__ static M Lt(F a, F b) { return a < b; }
  __device__ static M Eq(F a, F b) { return a == b; }
  __device__ static M Gt(F a, F b) { return a > b; }
  __device__ static M IsNan(F a) { return a != a; }
  __device__ static M Nle(F a, F b) { return !(a <= b); }
  __device__ static M Or(M a, M b) { return a || b; }
  __device__ static M And(M a, M b) { return a && b; }
  __device__ static bool Any(M m) { return m; }
  __device__ static F Select(M m, F a, F b) { return m ? a : b; }

  __device__ static D SetD(double v) { return v; }
  __device__ static D Widen(F v, int) { return static_cast<double>(v); }
  __device__ static F Narrow(const D* halves) { return __double2float_rn(halves[0]); }
  __device__ static D AddD(D a, D b) { return __dadd_rn(a, b); }
  __device__ static D MulD(D a, D b) { return __dmul_rn(a, b); }
  __device__ static D FmaD(D a, D b, D c) { return __fma_rn(a, b, c); }
  __device__ static D NegD(D a) { return -a; }
  // table[k mod 32] for the k held in kf's low bits (silu_grad_fast.h's
  // kExpTable; its tables are __device__ arrays in device code).
  __device__ static F Lookup32(const float* table, F kf) { return table[__float_as_uint(kf) & 31u]; }
  // Adds k*2^18 to t's bits, k in kf's low bits (see simd_avx512.h).
  __device__ static F AddExponent(F t, F kf) {
    return __uint_as_float(__float_as_uint(t) + (__float_as_uint(kf) << 18));
  }

  // p * 2^n for integral n in [-201, 68], in two steps so each factor is normal.
  __device__ static F ScaleByPow2(F p, F n) {
    if (n != n) return p;  // NaN input: p is NaN already
    const int32_t ni = static_cast<int32_t>(n);
    const int32_t n1 = ni >> 1;
    const int32_t n2 = ni - n1;
    const F s1 = __uint_as_float(static_cast<uint32_t>(n1 + 127) << 23);
    const F s2 = __uint_as_float(static_cast<uint32_t>(n2 + 127) << 23);
    return __fmul_rn(__fmul_rn(p, s1), s2);
  }
};

}  // namespace jas::simd

#endif  // JAX_ASCEND_SILU_KERNEL_CUDA_SIMD_CUDA_CUH_
