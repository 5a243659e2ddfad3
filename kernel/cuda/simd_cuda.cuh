// The vector-ops interface of silu_grad_math.h on a CUDA GPU.
//
// CudaLane is one element of one thread. Every operation is an explicitly
// rounded intrinsic (__fadd_rn, __fmaf_rn, ...), which the compiler never
// fuses or reorders, so a GPU thread executes exactly the IEEE operations the
// CPU ISAs do for the same formula (where the two kernels' results may still
// differ: silu_grad_cuda.h).
//
// PackLane<N> is N elements of one thread, and its V::Any asks the whole warp:
// the formula's "does any lane need the rare path" tests are then decided once
// per warp and pack, as the CPU decides them once per vector, and a warp
// whose lanes all take the fast path runs it straight through, without a
// branch per element. Which lanes share a decision never changes a result
// (silu_grad_fast.h: the choice is made per lane). Device code only.
#ifndef JAX_ASCEND_SILU_KERNEL_CUDA_SIMD_CUDA_CUH_
#define JAX_ASCEND_SILU_KERNEL_CUDA_SIMD_CUDA_CUH_

#include <cuda_runtime.h>

#include <cstdint>

#include "common/silu_grad_fast.h"  // the exp tables Lookup32 serves

namespace jas::simd {

// silu_grad_fast.h's two exp tables interleaved, {T_j, delta_j}: the two
// values ExpAndOnePlusXPlusExp looks up for one j come in one 8-byte load.
struct ExpPairs {
  float2 v[32];
};
constexpr ExpPairs MakeExpPairs() {
  constexpr math::ExpTables e = math::MakeExpTables();
  ExpPairs p{};
  for (int j = 0; j < 32; ++j) p.v[j] = float2{e.t[j], e.delta[j]};
  return p;
}
static __device__ constexpr ExpPairs kExpPairs = MakeExpPairs();

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
  __device__ static F Fms(F a, F b, F c) { return __fmaf_rn(a, b, -c); }
  __device__ static F Fnma(F a, F b, F c) { return __fmaf_rn(-a, b, c); }
  // An operand modifier of the instruction that consumes it (IEEE negate;
  // a NaN's sign is never seen: NaN results are made canonical).
  __device__ static F Neg(F a) { return -a; }
  __device__ static F Abs(F a) { return fabsf(a); }
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
  __device__ static F Narrow(const D* halves) { return Narrow1(halves[0]); }
  __device__ static F Narrow1(D d) { return __double2float_rn(d); }
  __device__ static D AddD(D a, D b) { return __dadd_rn(a, b); }
  __device__ static D MulD(D a, D b) { return __dmul_rn(a, b); }
  __device__ static D FmaD(D a, D b, D c) { return __fma_rn(a, b, c); }
  __device__ static D NegD(D a) { return -a; }
  // table[k mod 32] for the k held in kf's low bits; the only tables asked
  // for are silu_grad_fast.h's two, served from kExpPairs (the comparison is
  // decided at compile time, and the two lookups of one j share the load).
  __device__ static F Lookup32(const float* table, F kf) {
    const float2 p = __ldg(&kExpPairs.v[__float_as_uint(kf) & 31u]);
    return table == math::kExpTables.t ? p.x : p.y;
  }
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

template <int N>
struct PackLane {
  struct F {
    float v[N];
  };
  struct M {
    bool v[N];
  };
  struct D {
    double v[N];
  };
  static constexpr int kLanes = N;
  static constexpr int kHalves = 1;
  using L = CudaLane;

  // Each operation lane by lane, through CudaLane.
  template <class R, class Fn, class... A>
  __device__ static R Map(Fn fn, const A&... a) {
    R r;
#pragma unroll
    for (int k = 0; k < N; ++k) r.v[k] = fn(a.v[k]...);
    return r;
  }

  __device__ static F Set(float v) {
    F r;
#pragma unroll
    for (int k = 0; k < N; ++k) r.v[k] = v;
    return r;
  }
  __device__ static F Add(F a, F b) { return Map<F>(L::Add, a, b); }
  __device__ static F Sub(F a, F b) { return Map<F>(L::Sub, a, b); }
  __device__ static F Mul(F a, F b) { return Map<F>(L::Mul, a, b); }
  __device__ static F Div(F a, F b) { return Map<F>(L::Div, a, b); }
  __device__ static F Fma(F a, F b, F c) { return Map<F>(L::Fma, a, b, c); }
  __device__ static F Fms(F a, F b, F c) { return Map<F>(L::Fms, a, b, c); }
  __device__ static F Fnma(F a, F b, F c) { return Map<F>(L::Fnma, a, b, c); }
  __device__ static F Neg(F a) { return Map<F>(L::Neg, a); }
  __device__ static F Abs(F a) { return Map<F>(L::Abs, a); }
  __device__ static F Min(F a, F b) { return Map<F>(L::Min, a, b); }
  __device__ static F Max(F a, F b) { return Map<F>(L::Max, a, b); }
  __device__ static F Round(F a) { return Map<F>(L::Round, a); }
  __device__ static M Lt(F a, F b) { return Map<M>(L::Lt, a, b); }
  __device__ static M Eq(F a, F b) { return Map<M>(L::Eq, a, b); }
  __device__ static M Gt(F a, F b) { return Map<M>(L::Gt, a, b); }
  __device__ static M IsNan(F a) { return Map<M>(L::IsNan, a); }
  __device__ static M Nle(F a, F b) { return Map<M>(L::Nle, a, b); }
  __device__ static M Or(M a, M b) { return Map<M>(L::Or, a, b); }
  __device__ static M And(M a, M b) { return Map<M>(L::And, a, b); }
  // Any lane of this thread's pack, or of any other thread of the warp that
  // reaches the same test (the threads that reach it are the active ones).
  __device__ static bool Any(M m) {
    bool any = false;
#pragma unroll
    for (int k = 0; k < N; ++k) any = any || m.v[k];
    return __any_sync(__activemask(), any);
  }
  __device__ static F Select(M m, F a, F b) { return Map<F>(L::Select, m, a, b); }

  __device__ static D SetD(double v) {
    D r;
#pragma unroll
    for (int k = 0; k < N; ++k) r.v[k] = v;
    return r;
  }
  __device__ static D Widen(F v, int) { return Map<D>([](float f) { return static_cast<double>(f); }, v); }
  __device__ static F Narrow(const D* halves) { return Map<F>(L::Narrow1, halves[0]); }
  __device__ static D AddD(D a, D b) { return Map<D>(L::AddD, a, b); }
  __device__ static D MulD(D a, D b) { return Map<D>(L::MulD, a, b); }
  __device__ static D FmaD(D a, D b, D c) { return Map<D>(L::FmaD, a, b, c); }
  __device__ static D NegD(D a) { return Map<D>(L::NegD, a); }
  __device__ static F Lookup32(const float* table, F kf) {
    return Map<F>([table](float k) { return L::Lookup32(table, k); }, kf);
  }
  __device__ static F AddExponent(F t, F kf) { return Map<F>(L::AddExponent, t, kf); }
  __device__ static F ScaleByPow2(F p, F n) { return Map<F>(L::ScaleByPow2, p, n); }
};

}  // namespace jas::simd

#endif  // JAX_ASCEND_SILU_KERNEL_CUDA_SIMD_CUDA_CUH_
