// Controls over a CPU executor that the tests, the fuzzer, the benchmarks and
// the raw kernel binding use and the FFI handler does not: reuse of one plan,
// the instruction set, and the split of the work into chunks. They live in
// the test-only library jas_kernel_testing (kernel/cpu/testing.cc), which the
// product modules do not link.
#ifndef JAX_ASCEND_SILU_KERNEL_CPU_TESTING_H_
#define JAX_ASCEND_SILU_KERNEL_CPU_TESTING_H_

#include <cstdint>

#include "cpu/backend.h"

namespace jas {

// Repeatable executors (as aclSetAclOpExecutorRepeatable): they survive
// CpuRun and must be released with CpuDestroyExecutor. A SiluGrad executor
// can be re-pointed at new buffers of the same layout (kErrParamInvalid for
// any other operation's).
Status CpuSetRepeatable(CpuExecutor* executor);
Status SiluGradSetData(CpuExecutor* executor, const void* grad_output, const void* self, void* grad_input);

// Chooses the instruction set an executor runs with (default kAuto, which
// JAX_ASCEND_SILU_ISA may steer). kErrParamInvalid when the processor cannot run it.
Status CpuSetIsa(CpuExecutor* executor, Isa isa);

// Overrides the chunk size (elements per unit of parallel work; default 16K,
// a few microseconds of work). Results do not depend on it. By default a pass
// over fewer than 64K elements (the main pass, or the s'(x) pass over a
// broadcast self), or fewer than 256K when no helper task or pass that size
// ended within kHelperAwakeNanoseconds (cpu/helpers.h),
// stays on the calling thread (cpu/executor.h); an explicit chunk size lifts
// that, so any pass of two or more chunks is shared (tests use it to prove
// results do not depend on the split).
Status CpuSetChunkElements(CpuExecutor* executor, int64_t chunk_elements);

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_CPU_TESTING_H_
