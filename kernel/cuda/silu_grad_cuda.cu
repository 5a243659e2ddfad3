// Phase 2 of the CUDA backend: the device kernels and their launch.
//
// Two kernels over the plan of plan.cc, each a walk of grid.h:
//  - contiguous operands: one flat grid-stride loop with 16-byte loads and
//    stores (4 float32 or 8 half values per thread and step), then the tail;
//  - anything else (broadcast, strided): rows of the innermost dimension,
//    threads across a row, each row's base offsets computed once per thread.
// The arithmetic is silu_grad_math.h over simd::CudaLane; half types are
// computed in float32 and rounded once to nearest even. Indexing is 64-bit.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <type_traits>

#include "common/silu_grad_math.h"
#include "cuda/executor.h"
#include "cuda/grid.h"
#include "cuda/silu_grad_cuda.h"
#include "cuda/simd_cuda.cuh"

namespace jas {
namespace {

using Lane = simd::CudaLane;
using namespace cuda;  // the walks and launch shapes

// Each dtype's device loads and stores.
template <DataType T>
struct DeviceElem;
template <>
struct DeviceElem<DataType::kFloat32> {
  using S = DtypeStorage<DataType::kFloat32>::type;
  __device__ static float Load(S v) { return v; }
  __device__ static S Store(float f) { return f; }
};
template <>
struct DeviceElem<DataType::kFloat16> {
  using S = DtypeStorage<DataType::kFloat16>::type;
  __device__ static float Load(S v) { return __half2float(__ushort_as_half(v)); }
  __device__ static S Store(float f) { return __half_as_ushort(__float2half_rn(f)); }
};
template <>
struct DeviceElem<DataType::kBFloat16> {
  using S = DtypeStorage<DataType::kBFloat16>::type;
  __device__ static float Load(S v) { return __bfloat162float(__ushort_as_bfloat16(v)); }
  __device__ static S Store(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
};

// One element, as the CPU kernel's full mode (kernel/cpu/block.h): the same
// fast and general paths, chosen per element; half types are computed in
// float32 and rounded once.
template <class T>
__device__ typename T::S Element(typename T::S g, typename T::S x) {
  const float gf = T::Load(g), xf = T::Load(x);
  if constexpr (std::is_same_v<T, DeviceElem<DataType::kFloat32>>) {
    return T::Store(math::GradF32<Lane>(gf, xf));
  } else {
    return T::Store(math::GradHalf<Lane, std::is_same_v<T, DeviceElem<DataType::kFloat16>>>(gf, xf));
  }
}

__device__ Thread ThisThread() {
  return {blockIdx.x, gridDim.x, threadIdx.x, threadIdx.y, blockDim.x, blockDim.y};
}

// Operands may alias (an output written in place over an input): every
// element is read before its own slot is written, and by the same thread.
template <class T, bool kVector>
__global__ void __launch_bounds__(kThreads)
    FlatKernel(const typename T::S* g, const typename T::S* x, typename T::S* out, int64_t n) {
  using S = typename T::S;
  constexpr int kVec = 16 / sizeof(S);
  union Pack {
    uint4 raw;
    S e[kVec];
  };
  FlatWalk(
      ThisThread(), n, kVector ? kVec : 1,
      [&](int64_t i) {
        Pack a, b, o;
        a.raw = reinterpret_cast<const uint4*>(g)[i];
        b.raw = reinterpret_cast<const uint4*>(x)[i];
#pragma unroll
        for (int k = 0; k < kVec; ++k) o.e[k] = Element<T>(a.e[k], b.e[k]);
        reinterpret_cast<uint4*>(out)[i] = o.raw;
      },
      [&](int64_t i) { out[i] = Element<T>(g[i], x[i]); });
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    StridedKernel(const typename T::S* g, const typename T::S* x, typename T::S* out, Layout l) {
  StridedWalk(ThisThread(), l, [&](int64_t og, int64_t ox, int64_t oo) { out[oo] = Element<T>(g[og], x[ox]); });
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
    const auto blocks = static_cast<unsigned>(FlatLaunch(e.numel, vector ? kVec : 1));
    if (vector) {
      FlatKernel<T, true><<<blocks, kThreads, 0, stream>>>(g, x, out, e.numel);
    } else {
      FlatKernel<T, false><<<blocks, kThreads, 0, stream>>>(g, x, out, e.numel);
    }
    return;
  }
  const Layout l = MakeLayout(e);
  const BlockShape s = StridedLaunch(l);
  StridedKernel<T><<<static_cast<unsigned>(s.blocks), dim3(s.x, s.y), 0, stream>>>(g, x, out, l);
}

}  // namespace

Status SiluGradCudaRun(void* workspace, uint64_t workspace_size, SiluGradCudaExecutor* executor,
                       cudaStream_t stream, CudaFailure* failure) {
  (void)workspace;  // the plan needs none (see SiluGradCudaGetWorkspaceSize)
  (void)workspace_size;
  if (executor == nullptr) return kErrParamNullptr;
  std::unique_ptr<SiluGradCudaExecutor> owned(executor);  // run once
  const SiluGradCudaExecutor& e = *executor;
  if (e.numel == 0) return kSuccess;  // nothing is launched
  if (e.grad_output == nullptr || e.self == nullptr || e.grad_input == nullptr) {
    return kErrParamNullptr;
  }
  // An error already pending belongs to earlier work on this device (a failed
  // kernel of someone else's, a sticky fault). Launching would report it as
  // this launch's, and clearing it would hide it: it is reported as it is.
  if (const cudaError_t earlier = cudaGetLastError(); earlier != cudaSuccess) {
    if (failure != nullptr) *failure = {earlier, /*before_launch=*/true};
    return kErrRuntime;
  }
  if (!VisitDtype(e.dtype, [&]<DataType T>() { Launch<DeviceElem<T>>(e, stream); })) return kErrParamInvalid;
  if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) {
    if (failure != nullptr) *failure = {err, /*before_launch=*/false};
    return kErrRuntime;
  }
  return kSuccess;
}

}  // namespace jas
