// The plans the CUDA backend's phase 1 builds on the host and its phase 2
// launches. Internal to kernel/.
#ifndef JAX_ASCEND_SILU_KERNEL_CUDA_EXECUTOR_H_
#define JAX_ASCEND_SILU_KERNEL_CUDA_EXECUTOR_H_

#include <cstdint>

#include "common/broadcast.h"
#include "cuda/silu_grad_cuda.h"
#include "cuda/swiglu_grad_cuda.h"

struct jas::SiluGradCudaExecutor {
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
};

#endif  // JAX_ASCEND_SILU_KERNEL_CUDA_EXECUTOR_H_
