// The plans the CUDA backend's phase 1 builds on the host and its phase 2
// launches. Internal to kernel/.
#ifndef JAX_ASCEND_SILU_KERNEL_CUDA_EXECUTOR_H_
#define JAX_ASCEND_SILU_KERNEL_CUDA_EXECUTOR_H_

#include <cstddef>
#include <cstdint>
#include <new>

#include "common/broadcast.h"
#include "cuda/backend.h"
#include "silu_grad.h"
#include "swiglu_grad.h"

namespace jas::cuda {

// Phase 1 makes an executor for every call and phase 2 releases it: each
// thread keeps the last one released of each kind for its next phase 1, so
// the calls of a program (one thread, one call at a time) allocate once.
template <class Executor>
struct ExecutorSlot {
  void* kept = nullptr;
  ~ExecutorSlot() { ::operator delete(kept); }
  static ExecutorSlot& Mine() {
    thread_local ExecutorSlot slot;
    return slot;
  }
  static void* Take(size_t size) noexcept {
    ExecutorSlot& s = Mine();
    if (void* p = s.kept; p != nullptr) {
      s.kept = nullptr;
      return p;
    }
    return ::operator new(size, std::nothrow);
  }
  static void Give(void* p) noexcept {
    ExecutorSlot& s = Mine();
    if (s.kept == nullptr) {
      s.kept = p;
    } else {
      ::operator delete(p);
    }
  }
};

}  // namespace jas::cuda

// What every operation's phase 1 makes (tensor.h) and CudaRun runs.
struct jas::CudaExecutor {
  virtual ~CudaExecutor() = default;
  // Phase 2 of the planned operation, in CudaRun's terms (which releases the
  // executor after it).
  virtual Status Launch(void* workspace, uint64_t workspace_size, cudaStream_t stream,
                        cudaError_t* launch_error) const = 0;
};

namespace jas {

// Each plan type takes its memory from its thread's slot (cuda::ExecutorSlot);
// a plan released through a CudaExecutor* goes back to its own type's slot
// (the destructor is virtual).
template <class Plan>
struct SlotAllocated {
  static void* operator new(size_t size, const std::nothrow_t&) noexcept {
    return cuda::ExecutorSlot<Plan>::Take(size);
  }
  static void operator delete(void* p) noexcept { cuda::ExecutorSlot<Plan>::Give(p); }
};

// An elementwise gradient out = g * f'(x) over two operands that broadcast
// to the result (SiluGrad's operands and checks, common/validate.h): the plan
// of PlanGradCuda, launched by the operation's own `launch` (grad.cuh's
// kernels over its arithmetic: LaunchGrad). Every such operation shares it.
struct GradCudaPlan final : CudaExecutor, SlotAllocated<GradCudaPlan> {
  using LaunchFn = Status (*)(const GradCudaPlan& plan, cudaStream_t stream, cudaError_t* launch_error);
  Status Launch(void* workspace, uint64_t workspace_size, cudaStream_t stream,
                cudaError_t* launch_error) const override;

  LaunchFn launch = nullptr;
  DataType dtype = DataType::kFloat32;
  int64_t numel = 0;
  // gradInput's shape walked over [0] gradOutput, [1] self, [2] gradInput,
  // coalesced (common/broadcast.h); stride 0 where an input is broadcast.
  StridedLoop loop;
  // All three row-major over the loop: one flat, vectorised loop.
  bool contiguous = false;
  int64_t offsets[3] = {};  // storage offsets, in elements
  const void* grad_output = nullptr;
  const void* self = nullptr;
  void* grad_input = nullptr;
};

// Phase 1 of every such gradient (plan.cc): the operands checked, the plan
// made with the operation's launch.
Status PlanGradCuda(GradCudaPlan::LaunchFn launch, const TensorDesc* grad_output, const TensorDesc* self,
                    const TensorDesc* grad_input, uint64_t* workspace_size, CudaExecutor** executor);

// SwiGluGrad's plan is its checked layout (device pointers, offsets applied),
// launched by swiglu_grad_cuda.cu.
struct SwiGluGradCudaPlan final : CudaExecutor, SlotAllocated<SwiGluGradCudaPlan> {
  explicit SwiGluGradCudaPlan(const SwiGluLayout& l) : layout(l) {}
  Status Launch(void* workspace, uint64_t workspace_size, cudaStream_t stream,
                cudaError_t* launch_error) const override;

  SwiGluLayout layout;
};

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_CUDA_EXECUTOR_H_
