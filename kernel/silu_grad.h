// SiluGrad: gradInput = gradOutput * s'(x), s(x) = x * sigmoid(x).
//
// A two-phase API modelled on Ascend CANN's aclnnSiluBackward:
//   phase 1 (SiluGradGetWorkspaceSize) validates the tensor descriptors, plans
//           the loop nest and returns the workspace size and an executor;
//   phase 2 (SiluGradRun) executes the plan.
// Status codes use aclnn's numbers. Plain C++: no XLA, no Python.
#ifndef JAX_ASCEND_SILU_KERNEL_SILU_GRAD_H_
#define JAX_ASCEND_SILU_KERNEL_SILU_GRAD_H_

#include <cstdint>

#include "common/dtype.h"
#include "common/status.h"

namespace jas {

inline constexpr int64_t kMaxRank = 8;

// A strided view of a tensor (as aclCreateTensor describes one).
struct TensorDesc {
  DataType dtype = DataType::kFloat32;
  int64_t rank = 0;
  const int64_t* dims = nullptr;     // `rank` entries; may be null when rank == 0
  const int64_t* strides = nullptr;  // element strides (>= 0); null = row-major contiguous
  int64_t offset = 0;                // storage offset, in elements
  int64_t storage_numel = 0;         // elements addressable from `data`: reads and writes stay below it
  void* data = nullptr;              // may be null in phase 1; must be set before phase 2 if non-empty
};

// Instruction sets the kernel can run with. kAuto picks the best one the
// processor supports (decided once, at first use). Every ISA computes
// bitwise-identical results.
enum class Isa : int32_t { kAuto = 0, kScalar = 1, kAvx2 = 2, kAvx512 = 3, kNeon = 4 };
// Every ISA other than kAuto, whatever this processor runs.
inline constexpr Isa kIsas[] = {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kNeon};
const char* IsaName(Isa isa);
Isa BestIsa();                 // what kAuto resolves to on this processor
bool IsaSupported(Isa isa);    // whether this processor and build can run `isa`

// How phase 2 gets parallelism, the CPU analogue of a stream. The kernel splits
// the work into chunks; the calling thread always works on them too, and up to
// `num_workers` tasks handed to `schedule` help. A task may start late (or run
// inline inside `schedule`); phase 2 never waits for a task that has not claimed
// work, so a saturated pool cannot deadlock it.
struct Parallel {
  void* context = nullptr;
  int64_t num_workers = 0;
  void (*schedule)(void* context, void (*task)(void* arg), void* arg) = nullptr;
};

struct SiluGradExecutor;

// Phase 1. gradOutput and self broadcast (NumPy rules, right-aligned) to
// gradInput, whose shape must be exactly their broadcast shape. All three share
// one dtype. Ranks 0..8. On success *executor owns the plan; it runs once unless
// made repeatable.
Status SiluGradGetWorkspaceSize(const TensorDesc* grad_output, const TensorDesc* self,
                                const TensorDesc* grad_input, uint64_t* workspace_size,
                                SiluGradExecutor** executor);

// Phase 2. `workspace` must hold `workspace_size` >= the planned bytes (it may be
// null only when that is 0). `parallel` may be null (caller thread only). A
// non-repeatable executor is released by this call, whatever it returns.
Status SiluGradRun(void* workspace, uint64_t workspace_size, SiluGradExecutor* executor,
                   const Parallel* parallel);

// Repeatable executors (as aclSetAclOpExecutorRepeatable): they survive
// SiluGradRun, can be re-pointed at new buffers of the same layout, and must be
// released with SiluGradDestroyExecutor.
Status SiluGradSetRepeatable(SiluGradExecutor* executor);
Status SiluGradSetData(SiluGradExecutor* executor, const void* grad_output, const void* self,
                       void* grad_input);
Status SiluGradDestroyExecutor(SiluGradExecutor* executor);

// Chooses the instruction set an executor runs with (default kAuto).
// kErrParamInvalid when the processor cannot run it.
Status SiluGradSetIsa(SiluGradExecutor* executor, Isa isa);

// Overrides the chunk size (elements per unit of parallel work; default 16K,
// a few microseconds of work). Results do not depend on it. By default a pass
// over fewer than 64K elements (the main pass, or the s'(x) pass over a
// broadcast self) stays on the calling thread; an explicit chunk size lifts
// that, so any pass of two or more chunks is shared (tests use it to prove
// results do not depend on the split).
Status SiluGradSetChunkElements(SiluGradExecutor* executor, int64_t chunk_elements);

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_SILU_GRAD_H_
