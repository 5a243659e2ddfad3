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

// ---- several accesses per thread and pass ------------------------------

// Thread t's share of `count` items, kU per pass, i, i + step, ...,
// i + (kU - 1) * step (so each of a warp's accesses covers consecutive
// items: whole lines), all kU loaded before any is computed: a thread has
// kU loads of each operand in flight at once, which is what keeps enough
// bytes in flight per multiprocessor to cover the memory's latency.
// load(i) -> data; group(i, step, d) with d[k] item i + k * step's data;
// then, past the last whole pass, single(i, data) one by one.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <int kU, class LoadFn, class GroupFn, class SingleFn>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE void UnrolledStride(const Thread& t, int64_t count, LoadFn&& load, GroupFn&& group,
                                                      SingleFn&& single) {
  const int64_t step = t.blocks * t.dim_x;
  int64_t i = t.block * t.dim_x + t.x;
  using Data = decltype(load(i));
  for (; i + (kU - 1) * step < count; i += kU * step) {
    Data d[kU];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int k = 0; k < kU; ++k) d[k] = load(i + k * step);
    group(i, step, d);
  }
  for (; i < count; i += step) single(i, load(i));
}

// Elements before the first 16-byte boundary shared by `count` operands of
// `elem` bytes (at `addr`), at most n; -1 when their boundaries fall at
// different elements (then no 16-byte access serves all of them at once).
inline int64_t AlignedHead(const uintptr_t* addr, int count, int64_t elem, int64_t n) {
  const uintptr_t m = addr[0] % 16;
  for (int k = 1; k < count; ++k) {
    if (addr[k] % 16 != m) return -1;
  }
  if (m % static_cast<uintptr_t>(elem) != 0) return -1;
  const auto head = static_cast<int64_t>((16 - m) % 16) / elem;
  return head < n ? head : n;
}

// ---- contiguous operands: one flat grid-stride loop --------------------

// Vectors of each operand per thread and pass of FlatWalk: 4 x 16 bytes of
// g and of x in flight per thread.
inline constexpr int kFlatVectorsPerPass = 4;

// A contiguous call as FlatWalk splits it: `head` elements one by one (up
// to the operands' shared 16-byte boundary), `vectors` whole vectors of
// `vec` elements, then the tail one by one. vec 1: every element one by one
// (the operands' boundaries differ).
struct FlatSplit {
  int64_t n = 0, vec = 1, head = 0, vectors = 0;
  int64_t tail() const { return head + vectors * vec; }  // the first element past the vectors
};

inline FlatSplit MakeFlatSplit(int64_t n, int64_t elem, const uintptr_t* addr, int count) {
  FlatSplit s;
  s.n = n;
  const int64_t head = AlignedHead(addr, count, elem, n);
  if (head < 0 || elem >= 16) return s;
  s.vec = 16 / elem;
  s.head = head;
  s.vectors = (n - head) / s.vec;
  return s;
}

// Blocks of kThreads for the split: kFlatVectorsPerPass vectors per thread
// and pass (or one element, element by element).
inline int64_t FlatLaunch(const FlatSplit& s, DeviceShape d) {
  return s.vec > 1 ? GridBlocks(s.vectors, kFlatVectorsPerPass, d) : GridBlocks(s.n, 1, d);
}

// The elements the vectors leave (head and tail, fewer than vec each), one
// per thread of the grid's first, or every element (vec 1) grid-stride.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <class ElementFn>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE void EdgeElements(const Thread& t, const FlatSplit& s, ElementFn&& element) {
  if (s.vec == 1) {
    GridStride(t, s.n, element);
    return;
  }
  const int64_t tid = t.block * t.dim_x + t.x;
  if (tid < s.head) element(tid);
  if (s.tail() + tid < s.n) element(s.tail() + tid);
}

// Thread t's share of the split: whole vectors (vector i: elements head +
// i*vec on) kFlatVectorsPerPass per pass by UnrolledStride (load(i) ->
// data, group(i, step, d), single(i, data)), then element(i) for its head
// and tail elements.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <class LoadFn, class GroupFn, class SingleFn, class ElementFn>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE void FlatWalk(const Thread& t, const FlatSplit& s, LoadFn&& load,
                                                GroupFn&& group, SingleFn&& single, ElementFn&& element) {
  if (s.vec > 1) UnrolledStride<kFlatVectorsPerPass>(t, s.vectors, load, group, single);
  EdgeElements(t, s, element);
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

inline BroadcastLayout MakeBroadcastLayout(const GradCudaPlan& e, int64_t width) {
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

// Items per thread and pass of the broadcast walk where items are vectors:
// 2 x 32 bytes of g and of x in flight per thread.
inline constexpr int kBroadcastItemsPerPass = 2;

// Blocks of kThreads for the broadcast walk: kBroadcastItemsPerPass items
// per thread and pass where they are vectors, else one.
inline int64_t BroadcastLaunch(const BroadcastLayout& l, DeviceShape d) {
  return GridBlocks(l.items, l.vector ? kBroadcastItemsPerPass : 1, d);
}

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

// Thread t's share of the items where they are vectors, kBroadcastItemsPerPass
// per pass by UnrolledStride: load(offsets) -> data (every item whole),
// group(i, step, d), single(i, data).
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <bool kWide, class LoadFn, class GroupFn, class SingleFn>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE void BroadcastVectorWalk(const Thread& t, const BroadcastLayout& l, LoadFn&& load,
                                                           GroupFn&& group, SingleFn&& single) {
  UnrolledStride<kBroadcastItemsPerPass>(
      t, l.items,
      [&](int64_t i) {
        int64_t o[3];
        ItemOffsets<kWide>(l, i, o);
        return load(static_cast<const int64_t*>(o));
      },
      group, single);
}

// ---- SwiGluGrad: rows of A and B ----------------------------------------

// SwiGluGrad's elements as its kernel walks them: element i of yGrad (dense,
// numel = outer * inner) is column c = i % inner of row r = i / inner, which
// lies at r * row + c in A, B, dA and dB (swiglu_grad.h's SwiGluLayout).
// Where every operand allows 16-byte accesses the walk takes vectors of vec
// elements: a dense run (the pair form, or a split along the first axis)
// after `head` elements up to the operands' shared 16-byte boundary, with
// a tail after them; the packed form with rows a whole number of vectors
// and every operand aligned, each vector's row found once per vector.
// Otherwise (vec 1) element by element.
struct SwiGluRows {
  int64_t numel = 0;
  int64_t inner = 1;
  int64_t row = 1;
  int64_t vec = 1;      // elements per vector
  int64_t head = 0;     // dense: elements before the first whole vector
  int64_t vectors = 0;  // whole vectors
  // kFast: the row of element i (vec 1) or of vector v (vec > 1: divides by
  // inner / vec), by FastDivmod.
  FastDivmod div;
  int64_t tail() const { return head + vectors * vec; }
};

// How an element's row is found: kDense, A's elements are yGrad's (one row,
// or rows back to back: the pair form); kFast, FastDivmod (32 bits); kWide,
// 64-bit division (2^31 elements or vectors and more).
enum class SwiGluIndex { kDense, kFast, kWide };

// Vectors of each operand per thread and pass of SwiGluWalk: 2 x 16 bytes
// of yGrad, A and B in flight per thread.
inline constexpr int kSwiGluVectorsPerPass = 2;

inline SwiGluRows MakeSwiGluRows(const SwiGluLayout& l) {
  SwiGluRows r;
  r.numel = l.numel();
  r.inner = l.inner;
  r.row = l.row;
  const int64_t elem = ElementBytes(l.dtype);
  const uintptr_t addr[5] = {reinterpret_cast<uintptr_t>(l.y_grad), reinterpret_cast<uintptr_t>(l.a),
                             reinterpret_cast<uintptr_t>(l.b), reinterpret_cast<uintptr_t>(l.grad_a),
                             reinterpret_cast<uintptr_t>(l.grad_b)};
  const int64_t per16 = 16 / elem;
  if (r.row == r.inner || r.numel == r.inner) {  // dense
    const int64_t head = AlignedHead(addr, 5, elem, r.numel);
    if (head >= 0) {
      r.vec = per16;
      r.head = head;
      r.vectors = (r.numel - head) / per16;
    }
    return r;
  }
  bool aligned = r.inner % per16 == 0;
  for (uintptr_t a : addr) aligned = aligned && a % 16 == 0;
  if (aligned) {
    r.vec = per16;
    r.vectors = r.numel / per16;
    if (r.vectors < kFastIndexLimit) r.div = FastDivmod::Make(static_cast<uint32_t>(r.inner / per16));
  } else if (r.numel < kFastIndexLimit) {
    r.div = FastDivmod::Make(static_cast<uint32_t>(r.inner));
  }
  return r;
}

inline SwiGluIndex SwiGluIndexOf(const SwiGluRows& r) {
  if (r.row == r.inner || r.numel == r.inner) return SwiGluIndex::kDense;
  return (r.vec > 1 ? r.vectors : r.numel) < kFastIndexLimit ? SwiGluIndex::kFast : SwiGluIndex::kWide;
}

// Blocks of kThreads for the SwiGluGrad walk: kSwiGluVectorsPerPass vectors
// per thread and pass, or one element.
inline int64_t SwiGluLaunch(const SwiGluRows& r, DeviceShape d) {
  return r.vec > 1 ? GridBlocks(r.vectors, kSwiGluVectorsPerPass, d) : GridBlocks(r.numel, 1, d);
}

// An element's (or a vector's first element's) offset in yGrad, i, and in
// A, B, dA and dB, at.
struct SwiGluSpot {
  int64_t i = 0, at = 0;
};

// Where element or vector `k` (in units of `unit` elements) of the run lies:
// its row found by `div` (kFast, 32 bits), by 64-bit division (kWide) or
// not at all (kDense: at = i).
template <SwiGluIndex kIndex>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE SwiGluSpot SwiGluSpotOf(const SwiGluRows& r, int64_t k, int64_t unit,
                                                          int64_t first) {
  const int64_t i = first + k * unit;
  if constexpr (kIndex == SwiGluIndex::kFast) {
    const uint32_t row = r.div.Div(static_cast<uint32_t>(k));
    return {i, i + int64_t{row} * (r.row - r.inner)};
  } else if constexpr (kIndex == SwiGluIndex::kWide) {
    return {i, i + k / (r.inner / unit) * (r.row - r.inner)};
  } else {
    return {i, i};
  }
}

// Thread t's share of the elements. Vectors (vec > 1), kSwiGluVectorsPerPass
// per pass by UnrolledStride: load(spot) -> data, group(v, step, d),
// single(v, data), v the vector's index (the data carry what the stores need);
// then element(spot) for each element one by one: the dense run's head and
// tail, or every element (vec 1; a warp's 32 consecutive elements, coalesced).
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <SwiGluIndex kIndex, class LoadFn, class GroupFn, class SingleFn, class ElementFn>
JAS_HOST_DEVICE JAS_ALWAYS_INLINE void SwiGluWalk(const Thread& t, const SwiGluRows& r, LoadFn&& load,
                                                  GroupFn&& group, SingleFn&& single, ElementFn&& element) {
  if (r.vec > 1) {
    UnrolledStride<kSwiGluVectorsPerPass>(
        t, r.vectors, [&](int64_t v) { return load(SwiGluSpotOf<kIndex>(r, v, r.vec, r.head)); }, group, single);
    const int64_t tid = t.block * t.dim_x + t.x;
    if (tid < r.head) element(SwiGluSpot{tid, tid});  // dense only: packed rows have no head or tail
    if (r.tail() + tid < r.numel) element(SwiGluSpot{r.tail() + tid, r.tail() + tid});
    return;
  }
  GridStride(t, r.numel, [&](int64_t i) { element(SwiGluSpotOf<kIndex>(r, i, 1, 0)); });
}

}  // namespace jas::cuda

#endif  // JAX_ASCEND_SILU_KERNEL_CUDA_GRID_H_
