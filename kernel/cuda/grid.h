// How the CUDA kernels walk a plan: the launch shapes and each thread's share
// of the work, written for host and device alike, so that
// tests/backends/test_cuda_plan.cc runs the very loops the GPU runs over a
// simulated grid. Internal to kernel/.
#ifndef JAX_ASCEND_SILU_KERNEL_CUDA_GRID_H_
#define JAX_ASCEND_SILU_KERNEL_CUDA_GRID_H_

#include <cstdint>

#include "common/host_device.h"
#include "cuda/executor.h"
#include "swiglu_grad.h"

namespace jas::cuda {

inline constexpr int kThreads = 256;                     // per block
inline constexpr int64_t kMaxBlocks = int64_t{1} << 20;  // the grid when the device is not known

// One thread's place in a one-dimensional grid of one-dimensional blocks
// (blockIdx.x, gridDim.x, threadIdx.x, blockDim.x on the device).
struct Thread {
  int64_t block = 0, blocks = 1;
  int64_t x = 0, dim_x = 1;
};

// What the grid is sized to: the device's multiprocessors and how many blocks
// of the kernel each holds at once (cudaOccupancyMaxActiveBlocksPerMultiprocessor).
// 0: not known.
struct DeviceShape {
  int64_t sms = 0;
  int64_t blocks_per_sm = 0;
};

// A persistent grid: as many blocks as the device holds at once, fewer when
// the work (`work` items, `per_thread` of them per thread and pass) needs
// fewer; the walks' grid-stride loops take the rest.
inline int64_t GridBlocks(int64_t work, int64_t per_thread, DeviceShape d) {
  const int64_t per_block = kThreads * per_thread;
  const int64_t needed = (work + per_block - 1) / per_block;
  const int64_t cap = d.sms > 0 && d.blocks_per_sm > 0 ? d.sms * d.blocks_per_sm : kMaxBlocks;
  return needed < 1 ? 1 : needed < cap ? needed : cap;
}

// fn(i) for thread t's share of [0, n): one index per pass of the grid.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <class Fn>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE void GridStride(const Thread& t, int64_t n, Fn&& fn) {
  const int64_t step = t.blocks * t.dim_x;
  for (int64_t i = t.block * t.dim_x + t.x; i < n; i += step) fn(i);
}

// ---- contiguous operands: one flat grid-stride loop --------------------

// Vectors per thread and pass of FlatWalk.
inline constexpr int64_t kFlatVectorsPerPass = 2;

// Blocks of kThreads for `n` elements taken `vec` at a time (1: one by one).
inline int64_t FlatLaunch(int64_t n, int64_t vec, DeviceShape d) {
  return GridBlocks(vec > 1 ? n / vec : n, vec > 1 ? kFlatVectorsPerPass : 1, d);
}

// Thread t's share of n elements. With `vec` > 1, the whole vectors
// ([i*vec, (i+1)*vec)) go two per pass, i and i + step (each pass of the
// warp reads whole lines), the next pass's two loaded before this pass's
// are computed: load(i) -> data, pair(i0, data0, i1, data1); then at most
// one more, single(i, data); then element(i) for each element of the tail
// past the last whole vector (every element when vec is 1).
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <class LoadFn, class PairFn, class SingleFn, class ElementFn>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE void FlatWalk(const Thread& t, int64_t n, int64_t vec, LoadFn&& load,
                                                PairFn&& pair, SingleFn&& single, ElementFn&& element) {
  const int64_t step = t.blocks * t.dim_x;
  const int64_t tid = t.block * t.dim_x + t.x;
  int64_t begin = 0;
  if (vec > 1) {
    const int64_t vectors = n / vec;
    int64_t i = tid;
    if (i + step < vectors) {
      auto next0 = load(i);
      auto next1 = load(i + step);
      for (;;) {
        const auto cur0 = next0, cur1 = next1;
        const int64_t j = i + 2 * step;
        const bool more = j + step < vectors;
        if (more) {
          next0 = load(j);
          next1 = load(j + step);
        }
        pair(i, cur0, i + step, cur1);
        i = j;
        if (!more) break;
      }
    }
    if (i < vectors) single(i, load(i));
    begin = vectors * vec;
  }
  for (int64_t i = begin + tid; i < n; i += step) element(i);
}

// ---- anything else: chunks of the innermost dimension ------------------

// n / d and n % d for 0 <= n < 2^31 and 1 <= d <= 2^31 by one multiply-high,
// an add and a shift (Granlund and Montgomery, "Division by invariant
// integers using multiplication", 1994, round-up method with N = 32:
// l = ceil(log2 d), m = floor(2^32 (2^l - d) / d) + 1, q = (mulhi(m, n) + n) >> l;
// with n < 2^31 the sum cannot overflow). The magic numbers are computed on
// the host, once per launch.
struct FastDivmod {
  uint32_t d = 1, mul = 1, shift = 0;

  static FastDivmod Make(uint32_t d) {
    FastDivmod f;
    f.d = d;
    uint32_t l = 0;
    while ((uint64_t{1} << l) < d) ++l;
    f.shift = l;
    f.mul = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << l) - d)) / d + 1);
    return f;
  }
  JAS_HOST_DEVICE uint32_t Div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t hi = __umulhi(n, mul);
#else
    const uint32_t hi = static_cast<uint32_t>((uint64_t{n} * mul) >> 32);
#endif
    return (hi + n) >> shift;
  }
};

// Below this many items the walk's indices take FastDivmod (32 bits); from
// here on, plain 64-bit division.
inline constexpr int64_t kFastIndexLimit = int64_t{1} << 31;

// The walk over gradInput's shape in items of `width` consecutive elements of
// the innermost dimension (a row), `chunks` items per row (the last one short
// when the row is not a multiple of width): item -> (row, chunk) -> the outer
// multi-index -> each operand's offset.
struct BroadcastLayout {
  int32_t outer_rank = 0;
  int64_t outer_dims[kMaxRank - 1] = {};
  FastDivmod outer_div[kMaxRank - 1] = {};
  int64_t outer_strides[3][kMaxRank - 1] = {};
  int64_t inner = 1;
  int64_t inner_strides[3] = {};
  int64_t width = 1;
  int64_t chunks = 1;  // per row
  FastDivmod chunk_div;
  int64_t items = 0;
  // Every item whole, and each operand read or written with 16-byte accesses
  // (inner stride 1, every row start 16-byte aligned) or one element for all
  // (inner stride 0; gradInput is never broadcast).
  bool vector = false;
};

// Elements per item of the broadcast kernel: two 16-byte vectors' worth, so
// that each item's index arithmetic is spread over as many elements as a
// pass of the flat kernel computes.
inline int64_t BroadcastWidth(DataType t) { return 32 / ElementBytes(t); }

inline BroadcastLayout MakeBroadcastLayout(const SiluGradCudaExecutor& e, int64_t width) {
  const StridedLoop& loop = e.loop;
  BroadcastLayout l;
  const int64_t last = loop.rank - 1;
  l.outer_rank = static_cast<int32_t>(last);
  int64_t rows = 1;
  for (int64_t d = 0; d < last; ++d) {
    l.outer_dims[d] = loop.dims[d];
    rows *= loop.dims[d];
    for (int op = 0; op < 3; ++op) l.outer_strides[op][d] = loop.strides[op][d];
  }
  l.inner = loop.dims[last];
  for (int op = 0; op < 3; ++op) l.inner_strides[op] = loop.strides[op][last];
  l.width = width;
  l.chunks = (l.inner + width - 1) / width;
  l.items = rows * l.chunks;
  if (l.items < kFastIndexLimit) {
    for (int64_t d = 0; d < last; ++d) l.outer_div[d] = FastDivmod::Make(static_cast<uint32_t>(loop.dims[d]));
    l.chunk_div = FastDivmod::Make(static_cast<uint32_t>(l.chunks));
  }
  const int64_t elem = ElementBytes(e.dtype);
  const int64_t per16 = 16 / elem;
  const void* data[3] = {e.grad_output, e.self, e.grad_input};
  l.vector = width % per16 == 0 && l.inner % width == 0 && l.inner_strides[2] == 1;
  for (int op = 0; op < 3 && l.vector; ++op) {
    if (l.inner_strides[op] == 0) continue;
    l.vector = l.inner_strides[op] == 1 &&
               (reinterpret_cast<uintptr_t>(data[op]) + static_cast<uintptr_t>(e.offsets[op] * elem)) % 16 == 0;
    for (int64_t d = 0; d < last && l.vector; ++d) l.vector = l.outer_strides[op][d] % per16 == 0;
  }
  return l;
}

// Blocks of kThreads for the broadcast walk: one item per thread and pass.
inline int64_t BroadcastLaunch(const BroadcastLayout& l, DeviceShape d) { return GridBlocks(l.items, 1, d); }

// Item `item`'s first element in each operand (element offsets), and how many
// elements it has.
template <bool kWide>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE int64_t ItemOffsets(const BroadcastLayout& l, int64_t item, int64_t o[3]) {
  int64_t row, chunk;
  if constexpr (kWide) {
    row = item / l.chunks;
    chunk = item - row * l.chunks;
  } else {
    const uint32_t r = l.chunk_div.Div(static_cast<uint32_t>(item));
    chunk = static_cast<uint32_t>(item) - r * l.chunk_div.d;
    row = r;
  }
  const int64_t col = chunk * l.width;
  for (int op = 0; op < 3; ++op) o[op] = col * l.inner_strides[op];
  for (int d = l.outer_rank - 1; d >= 0; --d) {
    int64_t i;
    if (d == 0) {
      i = row;  // the outermost index needs no division
    } else if constexpr (kWide) {
      const int64_t q = row / l.outer_dims[d];
      i = row - q * l.outer_dims[d];
      row = q;
    } else {
      const uint32_t q = l.outer_div[d].Div(static_cast<uint32_t>(row));
      i = static_cast<uint32_t>(row) - q * l.outer_div[d].d;
      row = q;
    }
    for (int op = 0; op < 3; ++op) o[op] += i * l.outer_strides[op][d];
  }
  const int64_t left = l.inner - col;
  return left < l.width ? left : l.width;
}

// Thread t's share of the items: item(offsets, count) for each, one per pass.
// kWide: l.items >= kFastIndexLimit.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <bool kWide, class ItemFn>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE void BroadcastWalk(const Thread& t, const BroadcastLayout& l, ItemFn&& item) {
  GridStride(t, l.items, [&](int64_t i) {
    int64_t o[3];
    const int64_t count = ItemOffsets<kWide>(l, i, o);
    item(o, count);
  });
}

// ---- SwiGluGrad: rows of A and B ----------------------------------------

// SwiGluGrad's elements as its kernel walks them: element i of yGrad (dense,
// numel = outer * inner) is column c = i % inner of row r = i / inner, which
// lies at r * row + c in A, B, dA and dB (swiglu_grad.h's SwiGluLayout).
struct SwiGluRows {
  int64_t numel = 0;
  int64_t inner = 1;
  int64_t row = 1;
  FastDivmod inner_div;  // i / inner, where numel < kFastIndexLimit
};

// How an element's row is found: kDense, A's elements are yGrad's (one row,
// or rows back to back: the pair form); kFast, FastDivmod (32 bits); kWide,
// 64-bit division (2^31 elements and more).
enum class SwiGluIndex { kDense, kFast, kWide };

inline SwiGluRows MakeSwiGluRows(const SwiGluLayout& l) {
  SwiGluRows r;
  r.numel = l.numel();
  r.inner = l.inner;
  r.row = l.row;
  if (r.numel < kFastIndexLimit) r.inner_div = FastDivmod::Make(static_cast<uint32_t>(l.inner));
  return r;
}

inline SwiGluIndex SwiGluIndexOf(const SwiGluRows& r) {
  if (r.row == r.inner || r.numel == r.inner) return SwiGluIndex::kDense;
  return r.numel < kFastIndexLimit ? SwiGluIndex::kFast : SwiGluIndex::kWide;
}

// Blocks of kThreads for the SwiGluGrad walk: one element per thread and pass.
inline int64_t SwiGluLaunch(const SwiGluRows& r, DeviceShape d) { return GridBlocks(r.numel, 1, d); }

// Thread t's share of the elements, one per pass (a warp's 32 consecutive
// elements: coalesced accesses): element(i, at), i yGrad's offset and `at`
// A's, B's, dA's and dB's.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <SwiGluIndex kIndex, class ElementFn>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE void SwiGluWalk(const Thread& t, const SwiGluRows& r, ElementFn&& element) {
  GridStride(t, r.numel, [&](int64_t i) {
    int64_t at = i;
    if constexpr (kIndex == SwiGluIndex::kFast) {
      const uint32_t row = r.inner_div.Div(static_cast<uint32_t>(i));
      at = i + int64_t{row} * (r.row - r.inner);
    } else if constexpr (kIndex == SwiGluIndex::kWide) {
      at = i + i / r.inner * (r.row - r.inner);
    }
    element(i, at);
  });
}

}  // namespace jas::cuda

#endif  // JAX_ASCEND_SILU_KERNEL_CUDA_GRID_H_
