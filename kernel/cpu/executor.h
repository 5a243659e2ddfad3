// The plan phase 1 builds and phase 2 executes. Internal to kernel/.
#ifndef JAX_ASCEND_SILU_KERNEL_CPU_EXECUTOR_H_
#define JAX_ASCEND_SILU_KERNEL_CPU_EXECUTOR_H_

#include <cstdint>

#include "cpu/isa.h"
#include "silu_grad.h"

namespace jas {

// A row-major walk over `dims` touching three operands (a, b, out) through
// their own element strides. Dims are coalesced; rank is at least 1.
struct Loop {
  int64_t rank = 1;
  int64_t dims[kMaxRank] = {1};
  int64_t strides[3][kMaxRank] = {};  // [operand][dim], in elements
  int64_t elem_bytes[3] = {};
  int64_t numel = 1;
};

// Chunks of 16K elements take 7-13 us on one AVX-512 core: small enough that
// the last one finishing late costs little, large enough that handing them
// out is free.
inline constexpr int64_t kDefaultChunkElements = 16 * 1024;
// Waking a helper thread costs the caller about 15 us and the helper starts
// 20-60 us later (measured on a 2-vCPU virtual machine), so smaller tensors run
// on the calling thread alone; from 64K elements sharing paid off there.
inline constexpr int64_t kParallelMinElements = 64 * 1024;

}  // namespace jas

struct jas::SiluGradExecutor {
  DataType dtype = DataType::kFloat32;
  TypeIndex type = TypeIndex::kF32;
  // Over gradInput's shape. a = gradOutput, b = self, or the double s'(self)
  // in the workspace when `precompute` is set.
  Loop main;
  // When self is broadcast (each of its elements used at least twice), s'(self)
  // is evaluated once per element of self into the workspace (contiguous
  // double, self's own shape) and the main pass only multiplies.
  bool precompute = false;
  Loop pre;  // over self's own shape: b = self, out = workspace
  uint64_t workspace_bytes = 0;
  // Storage offsets (elements) applied to the data pointers.
  int64_t offsets[3] = {};
  const void* grad_output = nullptr;
  const void* self = nullptr;
  void* grad_input = nullptr;
  bool repeatable = false;
  Isa isa = Isa::kAuto;
  int64_t chunk_elements = kDefaultChunkElements;
  int64_t parallel_min_elements = kParallelMinElements;  // 0 once a chunk size is set
};

#endif  // JAX_ASCEND_SILU_KERNEL_CPU_EXECUTOR_H_
