// The CPU backend of every operation's contract (silu_grad.h, swiglu_grad.h):
// its instruction sets, its analogue of a stream (Parallel), and the one
// executor type and phase 2 that every operation's phase 1 hands over to,
// as every aclnn operator's executor runs through one phase-2 signature.
// Each operation declares its phase 1 in its contract header
// (SiluGradGetWorkspaceSize, ...); phase 2 runs on the calling thread and on
// helpers a Parallel provides, with the best instruction set the processor
// has.
#ifndef JAX_ASCEND_SILU_KERNEL_CPU_BACKEND_H_
#define JAX_ASCEND_SILU_KERNEL_CPU_BACKEND_H_

#include <cstdint>

#include "tensor.h"

namespace jas {

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

// CpuExecutor (tensor.h) is what every operation's phase 1 makes: it runs
// once unless made repeatable (cpu/testing.h, tests only).

// Phase 2 of any operation. `workspace` must hold `workspace_size` >= the
// bytes phase 1 planned (it may be null only when that is 0). `parallel` may
// be null (caller thread only). A non-repeatable executor is released by
// this call, whatever it returns.
Status CpuRun(void* workspace, uint64_t workspace_size, CpuExecutor* executor, const Parallel* parallel);

// Releases an executor that will not be run (or a repeatable one).
Status CpuDestroyExecutor(CpuExecutor* executor);

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_CPU_BACKEND_H_
