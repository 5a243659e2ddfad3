// SwiGluGrad on NVIDIA GPUs, behind the same two-phase contract as the CPU
// backend (swiglu_grad.h, cpu/swiglu_grad_cpu.h): phase 1 checks and plans
// on the host, phase 2 launches on a CUDA stream. Same descriptors, checks
// (common/swiglu_validate.cc) and status codes, and the same arithmetic
// (common/swiglu_grad_math.h over the CUDA vector ops, explicitly rounded
// IEEE operations in the CPU's order; half types computed in float32 and
// rounded once), so the results are meant to equal the CPU's bit for bit:
// tests/test_gpu.py checks that on a GPU, tests/backends/test_cuda_plan.cc
// runs the kernel's walk (kernel/cuda/grid.h) on the host. Plain C++ plus
// the CUDA runtime: no XLA, no Python.
#ifndef JAX_ASCEND_SILU_KERNEL_CUDA_SWIGLU_GRAD_CUDA_H_
#define JAX_ASCEND_SILU_KERNEL_CUDA_SWIGLU_GRAD_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "swiglu_grad.h"

namespace jas {

struct SwiGluGradCudaExecutor;

// Phase 1, packed (CANN's layout): x = [A | B] along `dim`, out = [dA | dB].
// Host only, nothing touches the device; `data` pointers are device pointers.
// The workspace is always 0 bytes.
Status SwiGluGradCudaGetWorkspaceSize(const TensorDesc* y_grad, const TensorDesc* x, int64_t dim,
                                      const TensorDesc* out, uint64_t* workspace_size,
                                      SwiGluGradCudaExecutor** executor);
// Phase 1, pair: A and B separate, dA and dB likewise.
Status SwiGluGradCudaPairGetWorkspaceSize(const TensorDesc* y_grad, const TensorDesc* a, const TensorDesc* b,
                                          const TensorDesc* grad_a, const TensorDesc* grad_b,
                                          uint64_t* workspace_size, SwiGluGradCudaExecutor** executor);

// Phase 2: enqueues the kernel on `stream` and returns without waiting;
// always releases the executor. A failed launch call gives kErrRuntime and,
// where `launch_error` is not null, its return code (SiluGradCudaRun's terms).
Status SwiGluGradCudaRun(void* workspace, uint64_t workspace_size, SwiGluGradCudaExecutor* executor,
                         cudaStream_t stream, cudaError_t* launch_error);

// Loads every kernel SwiGluGradCudaRun may launch on each visible device, as
// SiluGradCudaLoadKernels does for SiluGrad's (so that no launch inside a
// CUDA graph capture is a kernel's first use). "" on success, else why not.
std::string SwiGluGradCudaLoadKernels();

// Releases an executor that will not be run.
Status SwiGluGradCudaDestroyExecutor(SwiGluGradCudaExecutor* executor);

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_CUDA_SWIGLU_GRAD_CUDA_H_
