// The plan SiluGradCudaGetWorkspaceSize builds on the host and SiluGradCudaRun
// launches. Internal to kernel/.
#ifndef JAX_ASCEND_SILU_KERNEL_CUDA_EXECUTOR_H_
#define JAX_ASCEND_SILU_KERNEL_CUDA_EXECUTOR_H_

#include <cstdint>

#include "cuda/silu_grad_cuda.h"
#include "silu_grad.h"

struct jas::SiluGradCudaExecutor {
  DataType dtype = DataType::kFloat32;
  int64_t numel = 0;
  // gradInput's dims without its size-1 ones (at least one dim), and each
  // operand's element strides along them: [0] gradOutput, [1] self,
  // [2] gradInput; 0 where an input is broadcast.
  int64_t rank = 1;
  int64_t dims[kMaxRank] = {1};
  int64_t strides[3][kMaxRank] = {};
  // All three row-major over `dims`: one flat, vectorised loop.
  bool contiguous = false;
  int64_t offsets[3] = {};  // storage offsets, in elements
  const void* grad_output = nullptr;
  const void* self = nullptr;
  void* grad_input = nullptr;
};

#endif  // JAX_ASCEND_SILU_KERNEL_CUDA_EXECUTOR_H_
