// SiluGrad on NVIDIA GPUs, behind the same two-phase contract as the CPU
// kernel (silu_grad.h): phase 1 validates and plans on the host, phase 2
// launches on a CUDA stream. Same descriptors, status codes and formula
// (kernel/common/silu_grad_math.h, float32 arithmetic in the same order, half
// types rounded once). Where the CPU kernel evaluates s'(x) once per element
// of a broadcast x in double (its workspace), this kernel evaluates it per
// output element in float32, so results there may differ from the CPU's in the
// last bit; without that, they are meant to be bitwise equal: a GPU run of
// tests/test_backends.py (test_gpu_matches_cpu_bit_for_bit) checks the
// arithmetic, and tests/backends/test_cuda_plan.cc runs the kernels' grid
// loops (kernel/cuda/grid.h) on the host. Plain C++ plus the CUDA runtime: no
// XLA, no Python.
#ifndef JAX_ASCEND_SILU_KERNEL_CUDA_SILU_GRAD_CUDA_H_
#define JAX_ASCEND_SILU_KERNEL_CUDA_SILU_GRAD_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "silu_grad.h"

namespace jas {

struct SiluGradCudaExecutor;

// Phase 1 (host only, nothing touches the device). The contract's descriptors
// and checks (common/validate.h), so every invalid input gets the same status
// code on every backend; `data` pointers are device pointers.
// Broadcast operands are read through stride-0 dimensions, so this plan asks
// for no workspace; callers still honour whatever size is returned, as the
// contract allows one.
Status SiluGradCudaGetWorkspaceSize(const TensorDesc* grad_output, const TensorDesc* self,
                                    const TensorDesc* grad_input, uint64_t* workspace_size,
                                    SiluGradCudaExecutor** executor);

// Why phase 2 returned kErrRuntime: the CUDA error, and whether it was already
// pending before the launch (earlier work failed) or came from the launch.
struct CudaFailure {
  cudaError_t error = cudaSuccess;
  bool before_launch = false;
};

// Phase 2: enqueues the kernel on `stream` and returns without waiting. Always
// releases the executor. A CUDA error returns kErrRuntime and, when `failure`
// is not null, describes it there.
Status SiluGradCudaRun(void* workspace, uint64_t workspace_size, SiluGradCudaExecutor* executor,
                       cudaStream_t stream, CudaFailure* failure);

// Releases an executor that will not be run (e.g. its workspace could not be had).
Status SiluGradCudaDestroyExecutor(SiluGradCudaExecutor* executor);

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_CUDA_SILU_GRAD_CUDA_H_
