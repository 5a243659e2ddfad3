// The CPU handler: decode XLA's buffers, run the kernel's two phases with a
// host workspace (workspace.h), share large passes with the CPU backend's own
// helper threads (cpu/helpers.h).
#include <algorithm>
#include <cstdint>
#include <string>

#include "fresh_pages.h"
#include "handlers.h"
#include "silu_grad_operands.h"
#include "cpu/environment.h"
#include "cpu/helpers.h"
#include "cpu/backend.h"
#include "silu_grad.h"
#include "swiglu_grad.h"
#include "swiglu_operands.h"
#include "tensor_desc.h"
#include "workspace.h"
#include "xla/ffi/api/ffi.h"

namespace jas::ffi {
namespace {

// Threads per call, the calling thread included: no more than XLA's intra-op
// pool has (one per core unless XLA was told otherwise), so that the caller
// plus its helpers keep every core busy without oversubscribing them.
// JAX_ASCEND_SILU_THREADS=n caps it (cpu/environment.h).
int64_t ThreadsPerCall(const xffi::ThreadPool& pool) {
  return std::max<int64_t>(1, std::min<int64_t>(ThreadsFromEnvironment().cap, pool.num_threads()));
}

xffi::Error SiluGradCpuImpl(xffi::ThreadPool pool, xffi::AnyBuffer grad_output, xffi::AnyBuffer self,
                            xffi::Result<xffi::AnyBuffer> grad_input) {
  uint64_t workspace_bytes = 0;
  CpuExecutor* executor = nullptr;
  if (xffi::Error err = SiluGradPhase1(&SiluGradGetWorkspaceSize, grad_output, self, *grad_input,
                                       &workspace_bytes, &executor); err.failure()) {
    return err;
  }
  HostWorkspace workspace;
  if (xffi::Error err = AllocateHostWorkspace(workspace_bytes, &workspace); err.failure()) {
    CpuDestroyExecutor(executor);
    return err;
  }
  AdviseHugePagesIfFresh(grad_input->untyped_data(), grad_input->size_bytes());
  const Parallel parallel = CpuHelpers(ThreadsPerCall(pool));
  if (Status s = CpuRun(workspace.get(), workspace_bytes, executor, &parallel); s != kSuccess) {
    return SiluGradError(s, "phase 2 (Run)", "grad_input " + ShapeString(*grad_input));
  }
  return xffi::Error::Success();
}

xffi::Error SwiGluGradCpuImpl(xffi::ThreadPool pool, xffi::AnyBuffer grad_output, xffi::RemainingArgs args,
                              xffi::RemainingRets rets, int64_t axis) {
  SwiGluBuffers buffers;
  if (xffi::Error err = DecodeSwiGlu(grad_output, args, rets, axis, &buffers); err.failure()) return err;
  uint64_t workspace_bytes = 0;  // always 0 on the CPU
  CpuExecutor* executor = nullptr;
  if (xffi::Error err = SwiGluPhase1(&SwiGluGradGetWorkspaceSize, &SwiGluGradPairGetWorkspaceSize, buffers,
                                     &workspace_bytes, &executor);
      err.failure()) {
    return err;
  }
  for (int i = 3; i < (buffers.packed ? 4 : 5); ++i) {
    AdviseHugePagesIfFresh(buffers.buffers[i]->untyped_data(), buffers.buffers[i]->size_bytes());
  }
  const Parallel parallel = CpuHelpers(ThreadsPerCall(pool));
  if (Status s = CpuRun(nullptr, 0, executor, &parallel); s != kSuccess) {
    return SwiGluError(s, "phase 2 (Run)", buffers.Shapes());
  }
  return xffi::Error::Success();
}

}  // namespace
}  // namespace jas::ffi

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    JaxAscendSiluGradCpu, jas::ffi::SiluGradCpuImpl,
    jas::ffi::BindSiluGrad(::xla::ffi::Ffi::Bind().Ctx<::xla::ffi::ThreadPool>()));  // its size caps the threads per call

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    JaxAscendSwiGluGradCpu, jas::ffi::SwiGluGradCpuImpl,
    jas::ffi::BindSwiGluGrad(::xla::ffi::Ffi::Bind().Ctx<::xla::ffi::ThreadPool>()));  // its size caps the threads per call

// The operations this backend has (handlers.h).
std::span<const jas::ffi::Registration> jas::ffi::CpuRegistrations() {
  static constexpr Registration kTable[] = {{kSiluGrad, &JaxAscendSiluGradCpu},
                                            {kSwiGluGrad, &JaxAscendSwiGluGradCpu}};
  return kTable;
}
