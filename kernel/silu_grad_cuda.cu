// Phase 2 of the CUDA backend: the device kernels and their launch.
//
// Two kernels over the plan of silu_grad_cuda_plan.cc:
//  - contiguous operands: one flat grid-stride loop with 16-byte loads and
//    stores (4 float32 or 8 half values per thread and step);
//  - anything else (broadcast, strided): rows of the innermost dimension,
//    threads across a row, each row's base offsets computed once per thread.
// The arithmetic is silu_grad_math.h over simd::CudaLane; half types are
// computed in float32 and rounded once to nearest even. Indexing is 64-bit.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "silu_grad.h"
#include "silu_grad_cuda.h"
#include "silu_grad_cuda_executor.h"
#include "silu_grad_math.h"
#include "simd_cuda.cuh"

namespace jas {
namespace {

using Lane = simd::CudaLane;

struct F32 {
  using S = float;
  static constexpr bool kFloat32 = true;
  __device__ static float Load(S v) { return v; }
  __device__ static S Store(float f) { return f; }
};
struct F16 {
  using S = uint16_t;
  static constexpr bool kFloat32 = false;
  __device__ static float Load(S v) { return __half2float(__ushort_as_half(v)); }
  __device__ static S Store(float f) { return __half_as_ushort(__float2half_rn(f)); }
};
struct BF16 {
  using S = uint16_t;
  static constexpr bool kFloat32 = false;
  __device__ static float Load(S v) { return __bfloat162float(__ushort_as_bfloat16(v)); }
  __device__ static S Store(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
};

// One element, as the CPU kernel's full mode (silu_grad_block.h): float32
// finishes in double, half types round once from g * s'(x).
template <class T>
__device__ typename T::S Element(typename T::S g, typename T::S x) {
  const float gf = T::Load(g), xf = T::Load(x);
  if constexpr (T::kFloat32) {
    return T::Store(math::GradF32<Lane>(gf, xf));
  } else {
    return T::Store(Lane::Mul(gf, math::SiluDerivative<Lane>(xf)));
  }
}

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = int64_t{1} << 20;  // grid-stride loops cover the rest

// Operands may alias (an output written in place over an input): every
// element is read before its own slot is written, and by the same thread.
template <class T, bool kVector>
__global__ void __launch_bounds__(kThreads)
    FlatKernel(const typename T::S* g, const typename T::S* x, typename T::S* out, int64_t n) {
  using S = typename T::S;
  constexpr int kVec = 16 / sizeof(S);
  const int64_t step = int64_t{gridDim.x} * blockDim.x;
  const int64_t tid = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  int64_t begin = 0;
  if constexpr (kVector) {
    union Pack {
      uint4 raw;
      S e[kVec];
    };
    const int64_t vectors = n / kVec;
    for (int64_t i = tid; i < vectors; i += step) {
      Pack a, b, o;
      a.raw = reinterpret_cast<const uint4*>(g)[i];
      b.raw = reinterpret_cast<const uint4*>(x)[i];
#pragma unroll
      for (int k = 0; k < kVec; ++k) o.e[k] = Element<T>(a.e[k], b.e[k]);
      reinterpret_cast<uint4*>(out)[i] = o.raw;
    }
    begin = vectors * kVec;
  }
  for (int64_t i = begin + tid; i < n; i += step) out[i] = Element<T>(g[i], x[i]);
}

// A strided walk: the innermost dimension as rows, outer dims decoded per row.
struct Layout {
  int32_t outer_rank = 0;
  int64_t outer_dims[kMaxRank - 1] = {};
  int64_t outer_strides[3][kMaxRank - 1] = {};
  int64_t rows = 1;
  int64_t inner = 1;
  int64_t inner_strides[3] = {};
};

template <class T>
__global__ void __launch_bounds__(kThreads)
    StridedKernel(const typename T::S* g, const typename T::S* x, typename T::S* out, Layout l) {
  const int64_t row_step = int64_t{gridDim.x} * blockDim.y;
  for (int64_t row = int64_t{blockIdx.x} * blockDim.y + threadIdx.y; row < l.rows; row += row_step) {
    int64_t rem = row, og = 0, ox = 0, oo = 0;
    for (int d = l.outer_rank - 1; d >= 0; --d) {
      const int64_t i = rem % l.outer_dims[d];
      rem /= l.outer_dims[d];
      og += i * l.outer_strides[0][d];
      ox += i * l.outer_strides[1][d];
      oo += i * l.outer_strides[2][d];
    }
    for (int64_t c = threadIdx.x; c < l.inner; c += blockDim.x) {
      out[oo + c * l.inner_strides[2]] =
          Element<T>(g[og + c * l.inner_strides[0]], x[ox + c * l.inner_strides[1]]);
    }
  }
}

bool Aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <class T>
void Launch(const SiluGradCudaExecutor& e, cudaStream_t stream) {
  using S = typename T::S;
  const S* g = static_cast<const S*>(e.grad_output) + e.offsets[0];
  const S* x = static_cast<const S*>(e.self) + e.offsets[1];
  S* out = static_cast<S*>(e.grad_input) + e.offsets[2];
  if (e.contiguous) {
    constexpr int64_t kVec = 16 / sizeof(S);
    const bool vector = Aligned16(g) && Aligned16(x) && Aligned16(out);
    const int64_t work = vector ? (e.numel + kVec - 1) / kVec : e.numel;
    const int64_t blocks = std::min((work + kThreads - 1) / kThreads, kMaxBlocks);
    if (vector) {
      FlatKernel<T, true><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(g, x, out, e.numel);
    } else {
      FlatKernel<T, false><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(g, x, out, e.numel);
    }
    return;
  }
  Layout l;
  const int64_t last = e.rank - 1;
  l.outer_rank = static_cast<int32_t>(last);
  for (int64_t d = 0; d < last; ++d) {
    l.outer_dims[d] = e.dims[d];
    l.rows *= e.dims[d];
    for (int op = 0; op < 3; ++op) l.outer_strides[op][d] = e.strides[op][d];
  }
  l.inner = e.dims[last];
  for (int op = 0; op < 3; ++op) l.inner_strides[op] = e.strides[op][last];
  // Threads across a row up to its length (a power of two), the rest of the
  // block on further rows, so short rows still fill the block.
  int tx = 1;
  while (tx < kThreads && tx < l.inner) tx *= 2;
  const dim3 block(tx, kThreads / tx);
  const int64_t blocks = std::min((l.rows + block.y - 1) / block.y, kMaxBlocks);
  StridedKernel<T><<<static_cast<unsigned>(blocks), block, 0, stream>>>(g, x, out, l);
}

}  // namespace

Status SiluGradCudaRun(void* workspace, uint64_t workspace_size, SiluGradCudaExecutor* executor,
                       cudaStream_t stream, cudaError_t* cuda_error) {
  (void)workspace;  // the plan needs none (see SiluGradCudaGetWorkspaceSize)
  (void)workspace_size;
  if (executor == nullptr) return kErrParamNullptr;
  std::unique_ptr<SiluGradCudaExecutor> owned(executor);  // run once
  const SiluGradCudaExecutor& e = *executor;
  if (e.numel == 0) return kSuccess;  // nothing is launched
  if (e.grad_output == nullptr || e.self == nullptr || e.grad_input == nullptr) {
    return kErrParamNullptr;
  }
  (void)cudaGetLastError();  // a stale error from an earlier call is not this launch's
  switch (e.dtype) {
    case DataType::kFloat32: Launch<F32>(e, stream); break;
    case DataType::kFloat16: Launch<F16>(e, stream); break;
    case DataType::kBFloat16: Launch<BF16>(e, stream); break;
    default: return kErrParamInvalid;
  }
  if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) {
    if (cuda_error != nullptr) *cuda_error = err;
    return kErrRuntime;
  }
  return kSuccess;
}

}  // namespace jas
