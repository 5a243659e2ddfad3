// NumPy broadcasting, planned once for every backend: the result shape of two
// operands, and each operand seen with the result's shape as element strides,
// 0 along every broadcast dimension, so the expanded operand is never
// materialised. The CPU plan, the CUDA plan and the Ascend glue's aclTensor
// views all use these.
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_BROADCAST_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_BROADCAST_H_

#include <cstdint>

#include "silu_grad.h"

namespace jas {

// Row-major strides (in elements) of `dims`; a size-0 dimension counts as 1,
// like the kernel's descriptors do.
inline void RowMajorStrides(int64_t rank, const int64_t* dims, int64_t* strides) {
  int64_t step = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    strides[i] = step;
    step *= dims[i] > 0 ? dims[i] : 1;
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

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_BROADCAST_H_
