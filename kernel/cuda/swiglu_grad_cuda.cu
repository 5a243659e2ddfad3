// Phase 2 of SwiGluGrad's CUDA backend: the device kernel and its launch.
//
// One kernel per dtype and index mode, a walk of grid.h (SwiGluWalk) on a
// persistent grid: one element per thread and pass, so a warp reads 32
// consecutive elements of yGrad, A and B and writes 32 of dA and dB. The
// arithmetic is swiglu_grad_half.h's SwiGluGradOf over simd::PackLane<1>: one element per
// thread, the "does any lane need the general path" test decided once per
// warp (the warp runs the fast path straight through unless one of its lanes
// leaves it; which lanes share a decision never changes a result). Half types
// load widened to float32 and are rounded once, NaN results given the CPU
// kernel's bits (Dev<T>::Store1). dA and dB may be written over A and B
// (element for element, swiglu_grad.h): every thread reads its element's
// inputs before it writes that element's results, so the loads are plain
// (not through the non-coherent cache) and no pointer is __restrict__.
// Indexing is 64-bit.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "common/swiglu_grad_half.h"
#include "cuda/device.cuh"
#include "cuda/executor.h"
#include "cuda/grid.h"
#include "cuda/simd_cuda.cuh"
#include "cuda/swiglu_grad_cuda.h"

namespace jas {
namespace {

using namespace cuda;  // the walk, launch shapes and dtype conversions

template <DataType T, SwiGluIndex kIndex>
__global__ void __launch_bounds__(kThreads)
    SwiGluKernel(const typename Dev<T>::S* g, const typename Dev<T>::S* a, const typename Dev<T>::S* b,
                 typename Dev<T>::S* da, typename Dev<T>::S* db, SwiGluRows rows) {
  using E = Dev<T>;
  using V = simd::PackLane<1>;
  SwiGluWalk<kIndex>(ThisThread(), rows, [&](int64_t i, int64_t at) {
    const V::F gv{{E::Load1(g[i])}}, av{{E::Load1(a[at])}}, bv{{E::Load1(b[at])}};
    const math::SwiGluPair<V> r = math::SwiGluGradOf<V, T>(gv, av, bv);
    da[at] = E::Store1(r.da.v[0]);
    db[at] = E::Store1(r.db.v[0]);
  });
}

// Every kernel Launch may launch for dtype T.
template <DataType T>
cudaError_t LoadKernelsOf() {
  return LoadAll<&SwiGluKernel<T, SwiGluIndex::kDense>, &SwiGluKernel<T, SwiGluIndex::kFast>,
                 &SwiGluKernel<T, SwiGluIndex::kWide>>();
}

template <DataType T, SwiGluIndex kIndex>
cudaError_t LaunchRows(const SwiGluLayout& l, const SwiGluRows& rows, cudaStream_t stream) {
  using S = typename Dev<T>::S;
  constexpr auto kKernel = &SwiGluKernel<T, kIndex>;
  return LaunchOn<kKernel>(stream, SwiGluLaunch(rows, ShapeFor<kKernel>()), static_cast<const S*>(l.y_grad),
                           static_cast<const S*>(l.a), static_cast<const S*>(l.b), static_cast<S*>(l.grad_a),
                           static_cast<S*>(l.grad_b), rows);
}

template <DataType T>
cudaError_t Launch(const SwiGluLayout& l, cudaStream_t stream) {
  const SwiGluRows rows = MakeSwiGluRows(l);
  switch (SwiGluIndexOf(rows)) {
    case SwiGluIndex::kDense:
      return LaunchRows<T, SwiGluIndex::kDense>(l, rows, stream);
    case SwiGluIndex::kFast:
      return LaunchRows<T, SwiGluIndex::kFast>(l, rows, stream);
    case SwiGluIndex::kWide:
      break;
  }
  return LaunchRows<T, SwiGluIndex::kWide>(l, rows, stream);
}

}  // namespace

std::string SwiGluGradCudaLoadKernels() {
  return LoadOnEveryDevice([&]<DataType T>() { return LoadKernelsOf<T>(); });
}

Status SwiGluGradCudaRun(void* workspace, uint64_t workspace_size, SwiGluGradCudaExecutor* executor,
                         cudaStream_t stream, cudaError_t* launch_error) {
  (void)workspace;  // the plan needs none (common/swiglu_plan.h)
  (void)workspace_size;
  if (executor == nullptr) return kErrParamNullptr;
  const std::unique_ptr<SwiGluGradCudaExecutor> owned(executor);  // run once
  const SwiGluLayout& l = executor->layout;
  return LaunchFor(l.dtype, launch_error, [&]<DataType T>() { return Launch<T>(l, stream); });
}

}  // namespace jas
