// How the CUDA kernels walk a plan: the launch shapes and each thread's share
// of the work, written for host and device alike, so that
// tests/backends/test_cuda_plan.cc runs the very loops the GPU runs over a
// simulated grid. Internal to kernel/.
#ifndef JAX_ASCEND_SILU_KERNEL_CUDA_GRID_H_
#define JAX_ASCEND_SILU_KERNEL_CUDA_GRID_H_

#include <cstdint>

#include "common/host_device.h"
#include "cuda/executor.h"

namespace jas::cuda {

inline constexpr int kThreads = 256;                     // per block
inline constexpr int64_t kMaxBlocks = int64_t{1} << 20;  // grid-stride loops cover the rest

// One thread's place in a one-dimensional grid of two-dimensional blocks
// (blockIdx.x, gridDim.x, threadIdx.x/y, blockDim.x/y on the device).
struct Thread {
  int64_t block = 0, blocks = 1;
  int64_t x = 0, y = 0;
  int64_t dim_x = 1, dim_y = 1;
};

// ---- contiguous operands: one flat grid-stride loop --------------------

// Blocks for the flat kernel over `work` items (vectors or elements).
inline int64_t FlatBlocks(int64_t work) {
  const int64_t blocks = (work + kThreads - 1) / kThreads;
  return blocks < kMaxBlocks ? blocks : kMaxBlocks;
}

// Blocks of kThreads for `n` elements taken `vec` at a time (1: one by one).
inline int64_t FlatLaunch(int64_t n, int64_t vec) { return FlatBlocks(vec > 1 ? (n + vec - 1) / vec : n); }

// Thread t's share of n elements: vector(i) for each whole vector i of `vec`
// elements ([i*vec, (i+1)*vec)) it owns, then element(i) for each element of
// the tail past the last whole vector (every element when vec is 1).
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <class VectorFn, class ElementFn>
JAS_HOST_DEVICE inline void FlatWalk(const Thread& t, int64_t n, int64_t vec, VectorFn&& vector,
                                     ElementFn&& element) {
  const int64_t step = t.blocks * t.dim_x;
  const int64_t tid = t.block * t.dim_x + t.x;
  int64_t begin = 0;
  if (vec > 1) {
    const int64_t vectors = n / vec;
    for (int64_t i = tid; i < vectors; i += step) vector(i);
    begin = vectors * vec;
  }
  for (int64_t i = begin + tid; i < n; i += step) element(i);
}

// ---- anything else: rows of the innermost dimension --------------------

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
  const StridedLoop& loop = e.loop;
  Layout l;
  const int64_t last = loop.rank - 1;
  l.outer_rank = static_cast<int32_t>(last);
  for (int64_t d = 0; d < last; ++d) {
    l.outer_dims[d] = loop.dims[d];
    l.rows *= loop.dims[d];
    for (int op = 0; op < 3; ++op) l.outer_strides[op][d] = loop.strides[op][d];
  }
  l.inner = loop.dims[last];
  for (int op = 0; op < 3; ++op) l.inner_strides[op] = loop.strides[op][last];
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

// Thread t's share of the rows (y across rows, x along one):
// element(gradOutput offset, self offset, gradInput offset) for each element.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <class ElementFn>
JAS_HOST_DEVICE inline void StridedWalk(const Thread& t, const Layout& l, ElementFn&& element) {
  const int64_t row_step = t.blocks * t.dim_y;
  for (int64_t row = t.block * t.dim_y + t.y; row < l.rows; row += row_step) {
    int64_t o[3];
    RowOffsets(l, row, o);
    for (int64_t c = t.x; c < l.inner; c += t.dim_x) {
      element(o[0] + c * l.inner_strides[0], o[1] + c * l.inner_strides[1], o[2] + c * l.inner_strides[2]);
    }
  }
}

}  // namespace jas::cuda

#endif  // JAX_ASCEND_SILU_KERNEL_CUDA_GRID_H_
