// The CUDA handlers, SiluGrad's and SwiGluGrad's: the kernels' two phases on
// the stream XLA hands the call, the workspace (if SiluGrad's phase 1 ever
// asks for one) from XLA's scratch allocator, launch errors reported as
// ffi::Error.
#include <cuda_runtime_api.h>

#include <string>

#include "cuda/backend.h"
#include "silu_grad.h"
#include "swiglu_grad.h"
#include "handlers.h"
#include "silu_grad_operands.h"
#include "swiglu_operands.h"
#include "tensor_desc.h"
#include "workspace.h"
#include "xla/ffi/api/ffi.h"

namespace jas::ffi {
namespace {

std::string CudaErrorString(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + std::to_string(static_cast<int>(e)) + "): " + cudaGetErrorString(e);
}

// A scratch allocation lives until the handler returns. Inside a CUDA graph
// capture the kernel only runs when XLA replays the graph, after that memory
// is freed: a workspace cannot be had while the stream is capturing.
xffi::Error CheckWorkspaceOutsideCapture(cudaStream_t stream, uint64_t bytes) {
  if (bytes == 0) return xffi::Error::Success();
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (const cudaError_t e = cudaStreamIsCapturing(stream, &capture); e != cudaSuccess) {
    return xffi::Error::Internal("jax_ascend_silu: silu_grad could not ask whether its stream is being captured "
                                 "into a CUDA graph (cudaStreamIsCapturing returned " + CudaErrorString(e) + ")");
  }
  if (capture == cudaStreamCaptureStatusNone) return xffi::Error::Success();
  return xffi::Error::Internal(
      "jax_ascend_silu: silu_grad needs a device workspace of " + std::to_string(bytes) +
      " bytes, which XLA's scratch allocator frees before a CUDA graph (command buffer) being captured runs; "
      "run it outside command buffers (XLA_FLAGS=--xla_gpu_enable_command_buffer= disables them)");
}

// A launch call's own return code: a bad launch, or a sticky error an earlier
// kernel on this device left (CUDA reports those on any call, hence the hint
// for finding the call that failed first).
xffi::Error LaunchError(const char* op, cudaError_t launch_error, const std::string& operands) {
  return xffi::Error::Internal(std::string("jax_ascend_silu: ") + op +
                               "'s kernel launch (cudaLaunchKernelEx) returned " +
                               CudaErrorString(launch_error) + "; " + operands +
                               " (CUDA_LAUNCH_BLOCKING=1 makes each kernel report its own failure)");
}

xffi::Error SiluGradCudaImpl(cudaStream_t stream, xffi::ScratchAllocator scratch,
                             xffi::AnyBuffer grad_output, xffi::AnyBuffer self,
                             xffi::Result<xffi::AnyBuffer> grad_input) {
  uint64_t workspace_bytes = 0;
  CudaExecutor* executor = nullptr;
  if (xffi::Error err =
          SiluGradPhase1(&SiluGradCudaGetWorkspaceSize, grad_output, self, *grad_input, &workspace_bytes, &executor);
      err.failure()) {
    return err;
  }
  void* workspace = nullptr;
  xffi::Error err = CheckWorkspaceOutsideCapture(stream, workspace_bytes);
  if (!err.failure()) err = AllocateWorkspace(scratch, workspace_bytes, &workspace);
  if (err.failure()) {
    CudaDestroyExecutor(executor);
    return err;
  }
  cudaError_t launch_error = cudaSuccess;
  const Status s = CudaRun(workspace, workspace_bytes, executor, stream, &launch_error);
  if (s == kErrRuntime) {
    return LaunchError("silu_grad", launch_error, OperandsString(grad_output, self, *grad_input));
  }
  if (s != kSuccess) return SiluGradError(s, "phase 2 (Run)", OperandsString(grad_output, self, *grad_input));
  return xffi::Error::Success();
}

// SwiGluGrad, packed or pair (swiglu_operands.h). Its plan never asks for a
// workspace (common/swiglu_plan.h), so no scratch allocator is bound and the
// call is as safe inside a CUDA graph as SiluGrad's.
xffi::Error SwiGluGradCudaImpl(cudaStream_t stream, xffi::AnyBuffer grad_output, xffi::RemainingArgs args,
                               xffi::RemainingRets rets, int64_t axis) {
  SwiGluBuffers buffers;
  if (xffi::Error err = DecodeSwiGlu(grad_output, args, rets, axis, &buffers); err.failure()) return err;
  uint64_t workspace_bytes = 0;
  CudaExecutor* executor = nullptr;
  if (xffi::Error err = SwiGluPhase1(&SwiGluGradCudaGetWorkspaceSize, &SwiGluGradCudaPairGetWorkspaceSize,
                                     buffers, &workspace_bytes, &executor);
      err.failure()) {
    return err;
  }
  cudaError_t launch_error = cudaSuccess;
  const Status s = CudaRun(nullptr, 0, executor, stream, &launch_error);
  if (s == kErrRuntime) return LaunchError("SwiGluGrad", launch_error, buffers.Shapes());
  if (s != kSuccess) return SwiGluError(s, "phase 2 (Run)", buffers.Shapes());
  return xffi::Error::Success();
}

}  // namespace
}  // namespace jas::ffi

// Safe inside a CUDA graph: it only launches kernels on the given stream and
// never waits on or queries it beyond cudaStreamIsCapturing; its kernels are
// loaded when the module is imported (CudaLoadKernels), so a capture
// never loads one; and a workspace, the one allocation that would not outlive
// the capture, is refused while capturing (CheckWorkspaceOutsideCapture;
// today's plans need none). Without the trait XLA splits command buffers
// around the call.
XLA_FFI_DEFINE_HANDLER_SYMBOL(
    JaxAscendSiluGradCuda, jas::ffi::SiluGradCudaImpl,
    jas::ffi::BindSiluGrad(::xla::ffi::Ffi::Bind()
                               .Ctx<::xla::ffi::PlatformStream<cudaStream_t>>()  // the stream XLA runs this call on
                               .Ctx<::xla::ffi::ScratchAllocator>()),            // device workspace, freed after the call
    {::xla::ffi::Traits::kCmdBufferCompatible});

// Command-buffer compatible for SiluGrad's reasons above: it only launches on
// the given stream, its kernels are loaded at import (CudaLoadKernels)
// and it allocates nothing.
XLA_FFI_DEFINE_HANDLER_SYMBOL(
    JaxAscendSwiGluGradCuda, jas::ffi::SwiGluGradCudaImpl,
    jas::ffi::BindSwiGluGrad(
        ::xla::ffi::Ffi::Bind().Ctx<::xla::ffi::PlatformStream<cudaStream_t>>()),  // the stream XLA runs this call on
    {::xla::ffi::Traits::kCmdBufferCompatible});

// The operations this backend has (handlers.h).
std::span<const jas::ffi::Registration> jas::ffi::CudaRegistrations() {
  static constexpr Registration kTable[] = {{kSiluGrad, &JaxAscendSiluGradCuda},
                                            {kSwiGluGrad, &JaxAscendSwiGluGradCuda}};
  return kTable;
}

// Their kernels, in the table's order (handlers.h).
std::string jas::ffi::CudaLoadKernels() {
  for (std::string (*load)() : {&SiluGradCudaLoadKernels, &SwiGluGradCudaLoadKernels}) {
    if (std::string why = load(); !why.empty()) return why;
  }
  return "";
}
