// The plans the CUDA backend's phase 1 builds on the host and its phase 2
// launches. Internal to kernel/.
#ifndef JAX_ASCEND_SILU_KERNEL_CUDA_EXECUTOR_H_
#define JAX_ASCEND_SILU_KERNEL_CUDA_EXECUTOR_H_

#include <cstddef>
#include <cstdint>
#include <new>

#include "common/broadcast.h"
#include "cuda/silu_grad_cuda.h"
#include "cuda/swiglu_grad_cuda.h"

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

struct jas::SiluGradCudaExecutor {
  static void* operator new(size_t size, const std::nothrow_t&) noexcept {
    return cuda::ExecutorSlot<SiluGradCudaExecutor>::Take(size);
  }
  static void operator delete(void* p) noexcept { cuda::ExecutorSlot<SiluGradCudaExecutor>::Give(p); }

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

// SwiGluGrad's plan is its checked layout (device pointers, offsets applied).
struct jas::SwiGluGradCudaExecutor {
  SwiGluLayout layout;
  static void* operator new(size_t size, const std::nothrow_t&) noexcept {
    return cuda::ExecutorSlot<SwiGluGradCudaExecutor>::Take(size);
  }
  static void operator delete(void* p) noexcept { cuda::ExecutorSlot<SwiGluGradCudaExecutor>::Give(p); }
};

#endif  // JAX_ASCEND_SILU_KERNEL_CUDA_EXECUTOR_H_
