// The CUDA handler: the kernel's two phases on the stream XLA hands the call,
// the workspace (if phase 1 ever asks for one) from XLA's scratch allocator,
// launch errors reported as ffi::Error.
#include <cuda_runtime_api.h>

#include <string>

#include "cuda/silu_grad_cuda.h"
#include "handlers.h"
#include "silu_grad.h"
#include "tensor_desc.h"
#include "workspace.h"
#include "xla/ffi/api/ffi.h"

namespace jas::ffi {
namespace {

xffi::Error SiluGradCudaImpl(cudaStream_t stream, xffi::ScratchAllocator scratch,
                             xffi::AnyBuffer grad_output, xffi::AnyBuffer self,
                             xffi::Result<xffi::AnyBuffer> grad_input) {
  uint64_t workspace_bytes = 0;
  SiluGradCudaExecutor* executor = nullptr;
  if (xffi::Error err =
          Phase1(&SiluGradCudaGetWorkspaceSize, grad_output, self, *grad_input, &workspace_bytes, &executor);
      err.failure()) {
    return err;
  }
  void* workspace = nullptr;
  if (xffi::Error err = AllocateWorkspace(scratch, workspace_bytes, &workspace); err.failure()) {
    SiluGradCudaDestroyExecutor(executor);
    return err;
  }
  CudaFailure failure;
  const Status s = SiluGradCudaRun(workspace, workspace_bytes, executor, stream, &failure);
  if (s == kErrRuntime) {
    const std::string what = failure.before_launch ? "found an earlier CUDA error pending before its launch: "
                                                   : "CUDA kernel launch failed with ";
    return xffi::Error::Internal("jax_ascend_silu: SiluGrad " + what + cudaGetErrorName(failure.error) + " (" +
                                 std::to_string(failure.error) + "): " + cudaGetErrorString(failure.error) +
                                 "; " + OperandsString(grad_output, self, *grad_input));
  }
  if (s != kSuccess) return StatusError(s, "phase 2 (Run)", OperandsString(grad_output, self, *grad_input));
  return xffi::Error::Success();
}

}  // namespace
}  // namespace jas::ffi

// Safe inside a CUDA graph: it only launches kernels on the given stream,
// allocates device memory only through the scratch allocator (which XLA backs
// with a buffer of its own) and never waits on or queries the stream. Without
// the trait XLA splits command buffers around the call.
XLA_FFI_DEFINE_HANDLER_SYMBOL(
    JaxAscendSiluGradCuda, jas::ffi::SiluGradCudaImpl,
    jas::ffi::BindOperands(::xla::ffi::Ffi::Bind()
                               .Ctx<::xla::ffi::PlatformStream<cudaStream_t>>()  // the stream XLA runs this call on
                               .Ctx<::xla::ffi::ScratchAllocator>()),            // device workspace, freed after the call
    {::xla::ffi::Traits::kCmdBufferCompatible});
