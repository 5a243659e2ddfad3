// How the CUDA kernels walk a plan, written for host and device alike so the
// host tests can check the very indexing the GPU uses. Internal to kernel/.
#ifndef JAX_ASCEND_SILU_KERNEL_CUDA_LAYOUT_H_
#define JAX_ASCEND_SILU_KERNEL_CUDA_LAYOUT_H_

#include <cstdint>

#include "common/host_device.h"
#include "cuda/executor.h"
#include "silu_grad.h"

namespace jas::cuda {

inline constexpr int kThreads = 256;                     // per block
inline constexpr int64_t kMaxBlocks = int64_t{1} << 20;  // grid-stride loops cover the rest

// The strided walk: the innermost dimension is a row; the outer dims are
// decoded from the row number once per row.
struct Layout {
  int32_t outer_rank = 0;
  int64_t outer_dims[kMaxRank - 1] = {};
  int64_t outer_strides[3][kMaxRank - 1] = {};
  int64_t rows = 1;
  int64_t inner = 1;
  int64_t inner_strides[3] = {};
};

inline Layout MakeLayout(const SiluGradCudaExecutor& e) {
  Layout l;
  const int64_t last = e.rank - 1;
  l.outer_rank = static_cast<int32_t>(last);
  for (int64_t d = 0; d < last; ++d) {
    l.outer_dims[d] = e.dims[d];
    l.rows *= e.dims[d];
    for (int op = 0; op < 3; ++op) l.outer_strides[op][d] = e.strides[op][d];
  }
  l.inner = e.dims[last];
  for (int op = 0; op < 3; ++op) l.inner_strides[op] = e.strides[op][last];
  return l;
}

// Element offsets of row `row`'s first element in each operand.
JAS_HOST_DEVICE inline void RowOffsets(const Layout& l, int64_t row, int64_t offsets[3]) {
  offsets[0] = offsets[1] = offsets[2] = 0;
  for (int d = l.outer_rank - 1; d >= 0; --d) {
    const int64_t i = row % l.outer_dims[d];
    row /= l.outer_dims[d];
    for (int op = 0; op < 3; ++op) offsets[op] += i * l.outer_strides[op][d];
  }
}

// Block shape for the strided kernel: threads across a row up to its length
// (a power of two), the rest of the block on further rows, so short rows
// still fill the block.
struct BlockShape {
  int x = 1, y = kThreads;
  int64_t blocks = 1;
};

inline BlockShape StridedLaunch(const Layout& l) {
  BlockShape s;
  while (s.x < kThreads && s.x < l.inner) s.x *= 2;
  s.y = kThreads / s.x;
  s.blocks = (l.rows + s.y - 1) / s.y;
  if (s.blocks > kMaxBlocks) s.blocks = kMaxBlocks;
  return s;
}

// Blocks for the flat kernel over `work` items (vectors or elements).
inline int64_t FlatBlocks(int64_t work) {
  const int64_t blocks = (work + kThreads - 1) / kThreads;
  return blocks < kMaxBlocks ? blocks : kMaxBlocks;
}

}  // namespace jas::cuda

#endif  // JAX_ASCEND_SILU_KERNEL_CUDA_LAYOUT_H_
