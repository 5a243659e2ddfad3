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
  const TensorDesc go = Describe(grad_output);
  const TensorDesc x = Describe(self);
  const TensorDesc gi = Describe(*grad_input);
  uint64_t workspace_bytes = 0;
  SiluGradCudaExecutor* executor = nullptr;
  if (Status s = SiluGradCudaGetWorkspaceSize(&go, &x, &gi, &workspace_bytes, &executor);
      s != kSuccess) {
    return StatusError(s, "phase 1 (GetWorkspaceSize)", OperandsString(grad_output, self, *grad_input));
  }
  void* workspace = nullptr;
  if (xffi::Error err = AllocateWorkspace(scratch, workspace_bytes, &workspace); err.failure()) {
    SiluGradCudaDestroyExecutor(executor);
    return err;
  }
  cudaError_t cuda_error = cudaSuccess;
  const Status s = SiluGradCudaRun(workspace, workspace_bytes, executor, stream, &cuda_error);
  if (s == kErrRuntime) {
    return xffi::Error::Internal(std::string("jax_ascend_silu: SiluGrad CUDA kernel launch failed with ") +
                                 cudaGetErrorName(cuda_error) + " (" + std::to_string(cuda_error) +
                                 "): " + cudaGetErrorString(cuda_error) + "; " +
                                 OperandsString(grad_output, self, *grad_input));
  }
  if (s != kSuccess) return StatusError(s, "phase 2 (Run)", OperandsString(grad_output, self, *grad_input));
  return xffi::Error::Success();
}

}  // namespace
}  // namespace jas::ffi

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    JaxAscendSiluGradCuda, jas::ffi::SiluGradCudaImpl,
    ::xla::ffi::Ffi::Bind()
        .Ctx<::xla::ffi::PlatformStream<cudaStream_t>>()  // the stream XLA runs this call on
        .Ctx<::xla::ffi::ScratchAllocator>()               // device workspace, freed after the call
        .Arg<::xla::ffi::AnyBuffer>()                      // grad_output: F32/F16/BF16, broadcastable
        .Arg<::xla::ffi::AnyBuffer>()                      // self (x, the forward input), broadcastable
        .Ret<::xla::ffi::AnyBuffer>());                    // grad_input: the broadcast shape
