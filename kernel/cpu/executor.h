// The plans phase 1 builds and phase 2 executes. Internal to kernel/.
#ifndef JAX_ASCEND_SILU_KERNEL_CPU_EXECUTOR_H_
#define JAX_ASCEND_SILU_KERNEL_CPU_EXECUTOR_H_

#include <cstdint>

#include "common/broadcast.h"
#include "cpu/backend.h"
#include "cpu/helpers.h"
#include "cpu/isa.h"
#include "swiglu_grad.h"

namespace jas {

// A coalesced walk over three operands (a, b, out; common/broadcast.h) and
// the element size of each.
struct Loop : StridedLoop {
  int64_t elem_bytes[3] = {};
};

// A chunk of 16K elements is a few microseconds of work on one core: small
// enough that the last one finishing late costs little, large enough that
// handing chunks out is cheap by comparison.
inline constexpr int64_t kDefaultChunkElements = 16 * 1024;
// A helper that is awake (watching for work after its last task: cpu/helpers.h)
// joins within microseconds: from 64K elements on, sharing pays.
inline constexpr int64_t kParallelMinElements = 64 * 1024;
// A sleeping helper is another matter. Waking it costs the caller a system
// call of 5-20 microseconds, and the helper starts 30-50 microseconds after
// the call on a virtual machine (the idle vCPU's wake-up). A 128K-element
// pass takes about 90 microseconds on one thread: sharing it gains little.
// From 256K elements (about 200) the late helper's part repays its wake-up.
inline constexpr int64_t kColdParallelMinElements = 256 * 1024;

// Whether a pass of `numel` elements is shared with helpers, `since_busy_ns`
// after a helper task or a pass of `parallel_min` elements or more last
// ended: from `parallel_min` elements while the helpers are likely awake
// (kHelperAwakeNanoseconds), from `cold_min` once they have likely gone to
// sleep.
inline bool WorthSharing(int64_t numel, int64_t parallel_min, int64_t cold_min, int64_t since_busy_ns) {
  if (numel < parallel_min) return false;
  return numel >= cold_min || since_busy_ns < kHelperAwakeNanoseconds;
}

// Outputs from this size on are written with non-temporal stores. With the
// inputs (at least twice the bytes) they exceed the last-level cache of
// common processors (32 MiB per Zen 4 CCD), so ordinary stores would read each
// output line from memory before overwriting it, and evict inputs to keep
// lines that leave the cache before anyone reads them. Below it the result
// may still be in cache when the next operation reads it.
inline constexpr int64_t kStreamStoreMinBytes = int64_t{16} << 20;

// Calls fn(context, begin, end) over [0, numel) in chunks of `chunk`
// elements, on the calling thread and on up to parallel->num_workers helper
// tasks when WorthSharing says so (run.cc says how the chunks are shared).
// Returns when every chunk is done; fn runs in the float environment the
// kernels expect (round to nearest, subnormals honoured).
using RangeFn = void (*)(const void* context, int64_t begin, int64_t end);
Status RunInChunks(int64_t numel, int64_t chunk, int64_t parallel_min, int64_t cold_min, const Parallel* parallel,
                   RangeFn fn, const void* context);

}  // namespace jas

// What every operation's phase 1 makes (tensor.h) and CpuRun runs: the
// controls every plan shares, and the plan's own phase 2.
struct jas::CpuExecutor {
  virtual ~CpuExecutor() = default;
  // Phase 2 of the planned operation (CpuRun releases the executor after it).
  virtual Status Run(void* workspace, uint64_t workspace_size, const Parallel* parallel) const = 0;
  // RunInChunks over [0, numel) with this executor's chunk size and sharing thresholds.
  Status RunChunks(int64_t numel, const Parallel* parallel, RangeFn fn, const void* context) const {
    return RunInChunks(numel, chunk_elements, parallel_min_elements, cold_parallel_min_elements, parallel, fn,
                       context);
  }

  bool repeatable = false;
  Isa isa = Isa::kAuto;
  int64_t chunk_elements = kDefaultChunkElements;
  int64_t parallel_min_elements = kParallelMinElements;  // 0 once a chunk size is set
  int64_t cold_parallel_min_elements = kColdParallelMinElements;  // likewise
};

namespace jas {

// An elementwise gradient out = g * f'(x) over two operands that broadcast
// to the result (SiluGrad's operands and checks, common/validate.h): the plan
// of plan.cc, run by run.cc with the block functions `blocks` picks from the
// ISA's table (isa.h). Every such operation shares it; only its block
// functions differ.
struct GradPlan final : CpuExecutor {
  Status Run(void* workspace, uint64_t workspace_size, const Parallel* parallel) const override;

  GradBlocks BlockKernels::Entry::*blocks = nullptr;
  DataType dtype = DataType::kFloat32;
  // Over gradInput's shape. a = gradOutput, b = self, or the double f'(self)
  // in the workspace when `precompute` is set.
  Loop main;
  // When self is broadcast (each of its elements used at least twice), f'(self)
  // is evaluated once per element of self into the workspace (contiguous
  // double, self's own shape) and the main pass only multiplies.
  bool precompute = false;
  Loop pre;  // over self's own shape: b = self, out = workspace
  bool stream_stores = false;  // the main pass without a workspace, from kStreamStoreMinBytes on
  uint64_t workspace_bytes = 0;
  // Storage offsets (elements) applied to the data pointers.
  int64_t offsets[3] = {};
  const void* grad_output = nullptr;
  const void* self = nullptr;
  void* grad_input = nullptr;
};

// Phase 1 of every such gradient (plan.cc): the operands checked, the plan
// made with the operation's block functions.
Status PlanGrad(GradBlocks BlockKernels::Entry::*blocks, const TensorDesc* grad_output, const TensorDesc* self,
                const TensorDesc* grad_input, uint64_t* workspace_size, CpuExecutor** executor);

// SwiGluGrad's plan is its checked layout (swiglu.cc).
struct SwiGluGradPlan final : CpuExecutor {
  explicit SwiGluGradPlan(const SwiGluLayout& l) : layout(l) {}
  Status Run(void* workspace, uint64_t workspace_size, const Parallel* parallel) const override;

  SwiGluLayout layout;
};

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_CPU_EXECUTOR_H_
