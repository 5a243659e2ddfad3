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
#include <string>

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

// Phase 2: enqueues the kernel on `stream` (cudaLaunchKernelEx) and returns
// without waiting. Always releases the executor. When the launch call returns
// an error, returns kErrRuntime and, when `launch_error` is not null, puts the
// launch's own return code there (which may also be a sticky error left by
// earlier work on the device: the CUDA runtime reports those on any call).
Status SiluGradCudaRun(void* workspace, uint64_t workspace_size, SiluGradCudaExecutor* executor,
                       cudaStream_t stream, cudaError_t* launch_error);

// Loads every kernel SiluGradCudaRun may launch into each visible device's
// primary context (cudaFuncGetAttributes) and caches their occupancy, so
// that no launch is the first use of a kernel (which loads its module, and
// must not happen while a stream is captured into a CUDA graph). Leaves the
// calling thread's current device as it was. Returns "" on success, else why
// not (no driver, no device, ...); the launches still work without it when a
// device appears later.
std::string SiluGradCudaLoadKernels();

// Releases an executor that will not be run (e.g. its workspace could not be had).
Status SiluGradCudaDestroyExecutor(SiluGradCudaExecutor* executor);

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_CUDA_SILU_GRAD_CUDA_H_
