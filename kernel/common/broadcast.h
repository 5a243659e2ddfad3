// NumPy broadcasting, planned once for every backend: the result shape of two
// operands, each operand seen with the result's shape as element strides (0
// along every broadcast dimension, so the expanded operand is never
// materialised), and the loop nest over three such operands with its size-1
// dimensions dropped. The validator (validate.h), the CPU and CUDA plans and
// the Ascend glue's aclTensor views all use these.
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_BROADCAST_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_BROADCAST_H_

#include <cstdint>

#include "silu_grad.h"

namespace jas {

// Row-major strides (in elements) of `dims`; a size-0 dimension counts as 1,
// like the kernel's descriptors do. Strides past int64 (possible only for an
// empty tensor, which never steps) are 0.
inline void RowMajorStrides(int64_t rank, const int64_t* dims, int64_t* strides) {
  int64_t step = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    strides[i] = step;
    if (__builtin_mul_overflow(step, dims[i] > 0 ? dims[i] : 1, &step)) step = 0;
  }
}

// The broadcast of shapes `a` and `b` (dimensions aligned from the right):
// *rank and dims[0..*rank). False when they do not broadcast (a dimension
// pair neither equal nor containing 1) or either rank exceeds kMaxRank.
inline bool BroadcastShape(int64_t rank_a, const int64_t* a, int64_t rank_b, const int64_t* b, int64_t* rank,
                           int64_t* dims) {
  if (rank_a > kMaxRank || rank_b > kMaxRank) return false;
  const int64_t r = rank_a > rank_b ? rank_a : rank_b;
  for (int64_t j = 0; j < r; ++j) {
    const int64_t ka = j - (r - rank_a), kb = j - (r - rank_b);
    const int64_t da = ka < 0 ? 1 : a[ka], db = kb < 0 ? 1 : b[kb];
    if (da != db && da != 1 && db != 1) return false;
    dims[j] = da == 1 ? db : da;
  }
  *rank = r;
  return true;
}

// Strides of an operand (`rank`, `dims`, its own `strides`, null meaning
// row-major) along each of the output's `out_rank` dimensions, dimensions
// aligned from the right. False when the operand does not broadcast to
// `out_dims` (a dimension neither equal nor 1, a higher rank, rank > 8).
inline bool BroadcastStrides(int64_t rank, const int64_t* dims, const int64_t* strides,
                             int64_t out_rank, const int64_t* out_dims, int64_t* out_strides) {
  if (rank > out_rank || out_rank > kMaxRank) return false;
  int64_t own[kMaxRank];
  if (strides == nullptr) {
    RowMajorStrides(rank, dims, own);
    strides = own;
  }
  for (int64_t j = 0; j < out_rank; ++j) {
    const int64_t k = j - (out_rank - rank);
    if (k < 0 || (dims[k] == 1 && out_dims[j] != 1)) {
      out_strides[j] = 0;
    } else if (dims[k] == out_dims[j]) {
      out_strides[j] = strides[k];
    } else {
      return false;
    }
  }
  return true;
}

// A tensor's shape with explicit element strides.
struct StridedShape {
  int64_t rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
};

// A row-major walk over `dims` touching three operands through their own
// element strides ([operand][dim]; operand 2 is the output). Once coalesced:
// rank >= 1, no size-1 dimension unless the whole walk is one element, and no
// two neighbours that one longer dimension could replace.
struct StridedLoop {
  int64_t rank = 1;
  int64_t dims[kMaxRank] = {1};
  int64_t strides[3][kMaxRank] = {};
  int64_t numel = 1;
};

// Drops size-1 dims and merges neighbours that are contiguous for all three
// operands, so the innermost dimension is as long as possible. The loop must
// not be empty (an empty output is never walked).
inline void Coalesce(StridedLoop* loop) {
  int64_t n = 0;
  for (int64_t i = 0; i < loop->rank; ++i) {
    if (loop->dims[i] == 1) continue;
    if (n > 0) {
      bool merge = true;
      for (int op = 0; op < 3; ++op) {
        int64_t span;
        merge = merge && !__builtin_mul_overflow(loop->strides[op][i], loop->dims[i], &span) &&
                loop->strides[op][n - 1] == span;
      }
      if (merge) {
        loop->dims[n - 1] *= loop->dims[i];
        for (int op = 0; op < 3; ++op) loop->strides[op][n - 1] = loop->strides[op][i];
        continue;
      }
    }
    loop->dims[n] = loop->dims[i];
    for (int op = 0; op < 3; ++op) loop->strides[op][n] = loop->strides[op][i];
    ++n;
  }
  if (n == 0) {  // a single element, or all dims 1
    loop->dims[0] = 1;
    for (int op = 0; op < 3; ++op) loop->strides[op][0] = 0;
    n = 1;
  }
  loop->rank = n;
  loop->numel = 1;
  for (int64_t i = 0; i < n; ++i) loop->numel *= loop->dims[i];
}

// The coalesced loop over `out`'s shape reading `a` and `b` broadcast to it
// (null: an absent operand, stride 0). False when `a` or `b` does not
// broadcast to `out`. `out` must not be empty.
inline bool BroadcastLoop(const StridedShape* a, const StridedShape* b, const StridedShape& out, StridedLoop* loop) {
  loop->rank = out.rank;
  for (int64_t j = 0; j < out.rank; ++j) {
    loop->dims[j] = out.dims[j];
    loop->strides[0][j] = loop->strides[1][j] = 0;
    loop->strides[2][j] = out.strides[j];
  }
  const StridedShape* in[2] = {a, b};
  for (int op = 0; op < 2; ++op) {
    if (in[op] != nullptr && !BroadcastStrides(in[op]->rank, in[op]->dims, in[op]->strides, out.rank, out.dims,
                                               loop->strides[op])) {
      return false;
    }
  }
  Coalesce(loop);
  return true;
}

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_BROADCAST_H_
