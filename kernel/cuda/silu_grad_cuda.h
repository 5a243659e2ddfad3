// SiluGrad on NVIDIA GPUs, behind the same two-phase contract as the CPU
// kernel (silu_grad.h): phase 1 validates and plans on the host, phase 2
// launches on a CUDA stream. Same descriptors, status codes and numerics
// (bitwise identical results for non-NaN values). Plain C++ plus the CUDA
// runtime: no XLA, no Python.
#ifndef JAX_ASCEND_SILU_KERNEL_CUDA_SILU_GRAD_CUDA_H_
#define JAX_ASCEND_SILU_KERNEL_CUDA_SILU_GRAD_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "silu_grad.h"

namespace jas {

struct SiluGradCudaExecutor;

// Phase 1 (host only, nothing touches the device). Descriptors as for
// SiluGradGetWorkspaceSize, whose checks it applies, so every invalid input gets
// the same status code on both backends; `data` pointers are device pointers.
// Broadcast operands are read through stride-0 dimensions: the workspace is
// always 0 bytes today, but callers must honour whatever size is returned.
Status SiluGradCudaGetWorkspaceSize(const TensorDesc* grad_output, const TensorDesc* self,
                                    const TensorDesc* grad_input, uint64_t* workspace_size,
                                    SiluGradCudaExecutor** executor);

// Phase 2: enqueues the kernel on `stream` and returns without waiting. Always
// releases the executor. A failed launch returns kErrRuntime and, when
// `cuda_error` is not null, stores the cudaError_t there.
Status SiluGradCudaRun(void* workspace, uint64_t workspace_size, SiluGradCudaExecutor* executor,
                       cudaStream_t stream, cudaError_t* cuda_error);

// Releases an executor that will not be run (e.g. its workspace could not be had).
Status SiluGradCudaDestroyExecutor(SiluGradCudaExecutor* executor);

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_CUDA_SILU_GRAD_CUDA_H_
