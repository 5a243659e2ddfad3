// The CUDA backend of every operation's contract (silu_grad.h,
// swiglu_grad.h), behind the CPU's two phases: phase 1 (each operation's
// <Op>CudaGetWorkspaceSize, declared in its contract header) validates and
// plans on the host, and the one phase 2 here launches any operation's plan
// on a CUDA stream. Same descriptors, checks, status codes and arithmetic
// (kernel/common/, float32 arithmetic in the CPU's order, half types rounded
// once), so results are meant to equal the CPU's bit for bit, with one
// exception: where the CPU evaluates SiluGrad's s'(x) once per element of a
// broadcast x in double (its workspace), this backend evaluates it per
// output element in float32, so results there may differ in the last bit. A
// GPU run of tests/test_backends.py and tests/test_gpu.py checks the bits;
// tests/backends/test_cuda_plan.cc and test_cuda_swiglu_plan.cc run the
// kernels' grid loops (kernel/cuda/grid.h) on the host. Plain C++ plus the
// CUDA runtime: no XLA, no Python.
#ifndef JAX_ASCEND_SILU_KERNEL_CUDA_BACKEND_H_
#define JAX_ASCEND_SILU_KERNEL_CUDA_BACKEND_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tensor.h"

namespace jas {

// Phase 2 of any operation: enqueues its kernels on `stream`
// (cudaLaunchKernelEx) and returns without waiting. Always releases the
// executor. When a launch call returns an error, returns kErrRuntime and,
// when `launch_error` is not null, puts the launch's own return code there
// (which may also be a sticky error left by earlier work on the device: the
// CUDA runtime reports those on any call). Today's plans need no workspace.
//
// Each operation's <Op>CudaLoadKernels loads every kernel this may launch
// for it into each visible device's primary context (cudaFuncGetAttributes)
// and caches their occupancy, so that no launch is the first use of a kernel
// (which loads its module, and must not happen while a stream is captured
// into a CUDA graph). They leave the calling thread's current device as it
// was, and return "" on success, else why not (no driver, no device, ...);
// the launches still work without them when a device appears later.
Status CudaRun(void* workspace, uint64_t workspace_size, CudaExecutor* executor, cudaStream_t stream,
               cudaError_t* launch_error);

// Releases an executor that will not be run (e.g. its workspace could not be had).
Status CudaDestroyExecutor(CudaExecutor* executor);

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_CUDA_BACKEND_H_
