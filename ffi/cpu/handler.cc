// The CPU handler: decode XLA's buffers, run the kernel's two phases with the
// XLA-owned workspace buffer, parallelise over XLA's intra-op thread pool.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fresh_pages.h"
#include "handlers.h"
#include "silu_grad.h"
#include "tensor_desc.h"
#include "xla/ffi/api/ffi.h"

namespace jas::ffi {
namespace {

void ScheduleOnPool(void* pool, void (*task)(void*), void* arg) {
  static_cast<xffi::ThreadPool*>(pool)->Schedule([task, arg] { task(arg); });
}

// Threads per call, the calling thread included. XLA runs the program on the
// caller's thread, outside its intra-op pool (one thread per core), so the
// caller plus (pool size - 1) helpers keep every core busy without
// oversubscribing them. JAX_ASCEND_SILU_THREADS=n caps it (read once).
int64_t ThreadsPerCall(const xffi::ThreadPool& pool) {
  static const int64_t cap = [] {
    const char* env = std::getenv("JAX_ASCEND_SILU_THREADS");
    const long long v = env ? std::atoll(env) : 0;
    return v > 0 ? static_cast<int64_t>(v) : INT64_MAX;
  }();
  return std::max<int64_t>(1, std::min<int64_t>(cap, pool.num_threads()));
}

xffi::Error SiluGradCpuImpl(xffi::ThreadPool pool, xffi::AnyBuffer grad_output, xffi::AnyBuffer self,
                            xffi::Result<xffi::AnyBuffer> grad_input,
                            xffi::Result<xffi::AnyBuffer> workspace) {
  const TensorDesc go = Describe(grad_output);
  const TensorDesc x = Describe(self);
  const TensorDesc gi = Describe(*grad_input);
  uint64_t workspace_bytes = 0;
  SiluGradExecutor* executor = nullptr;
  if (Status s = SiluGradGetWorkspaceSize(&go, &x, &gi, &workspace_bytes, &executor); s != kSuccess) {
    return StatusError(s, "phase 1 (GetWorkspaceSize)", OperandsString(grad_output, self, *grad_input));
  }
  // The workspace is an extra XLA result sized at trace time by the same phase 1.
  const uint64_t have = workspace->size_bytes();
  if (have < workspace_bytes) {
    SiluGradDestroyExecutor(executor);
    return xffi::Error::InvalidArgument(
        "jax_ascend_silu: workspace buffer holds " + std::to_string(have) + " bytes, phase 1 needs " +
        std::to_string(workspace_bytes));
  }
  AdviseHugePagesIfFresh(grad_input->untyped_data(), grad_input->size_bytes());
  Parallel parallel{&pool, ThreadsPerCall(pool) - 1, &ScheduleOnPool};
  void* ws = workspace_bytes > 0 ? workspace->untyped_data() : nullptr;
  if (Status s = SiluGradRun(ws, have, executor, &parallel); s != kSuccess) {
    return StatusError(s, "phase 2 (Run)", "grad_input " + ShapeString(*grad_input));
  }
  return xffi::Error::Success();
}

}  // namespace
}  // namespace jas::ffi

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    JaxAscendSiluGradCpu, jas::ffi::SiluGradCpuImpl,
    ::xla::ffi::Ffi::Bind()
        .Ctx<::xla::ffi::ThreadPool>()      // XLA's intra-op pool: phase 2's helpers
        .Arg<::xla::ffi::AnyBuffer>()       // grad_output: F32/F16/BF16, broadcastable
        .Arg<::xla::ffi::AnyBuffer>()       // self (x, the forward input), broadcastable
        .Ret<::xla::ffi::AnyBuffer>()       // grad_input: the broadcast shape
        .Ret<::xla::ffi::AnyBuffer>());     // workspace: u8[phase-1 size], owned by XLA
