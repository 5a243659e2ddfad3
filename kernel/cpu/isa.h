// Per-ISA tables of contiguous-block kernels, and run-time selection.
#ifndef JAX_ASCEND_SILU_KERNEL_CPU_ISA_H_
#define JAX_ASCEND_SILU_KERNEL_CPU_ISA_H_

#include <cstdint>

#include "cpu/backend.h"

namespace jas {

// out[i] = f(a[i], b[i]) for i < n over contiguous arrays (a may be null for `derivative`).
using BlockFn = void (*)(const void* a, const void* b, void* out, int64_t n);
// SwiGluGrad over contiguous arrays: (da[i], db[i]) = f(g[i], a[i], b[i]) for i < n.
using SwiGluBlockFn = void (*)(const void* g, const void* a, const void* b, void* da, void* db, int64_t n);

// An elementwise gradient out = g * f'(x): the block functions its plan
// (executor.h's GradPlan) runs.
struct GradBlocks {
  BlockFn full;             // out = g * f'(x)
  BlockFn full_stream;      // the same results, written with non-temporal stores where the ISA has them
  BlockFn derivative;       // out(double) = f'(x)
  BlockFn from_derivative;  // out = g * d, d double
};

// One slot per operation (block.h's EntryFor fills them).
struct BlockKernels {
  struct Entry {
    GradBlocks silu;          // SiluGrad: f = silu
    SwiGluBlockFn swiglu;     // da = g * b * s'(a), db = g * silu(a)
  };
  Entry by_type[kNumDtypes];  // in the dtype table's order (DtypeIndex)
};

// Tables defined in isa_<name>.cc; null when the build lacks that ISA.
const BlockKernels* ScalarKernels();
const BlockKernels* Avx2Kernels();
const BlockKernels* Avx512Kernels();
const BlockKernels* NeonKernels();

const BlockKernels* KernelsFor(Isa isa);  // resolved ISA (not kAuto); null if unavailable

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_CPU_ISA_H_
