// An operand seen with the output's shape: NumPy broadcasting expressed as
// element strides, 0 along every broadcast dimension, so the expanded operand
// is never materialised. Used by the device backends (the CUDA plan and the
// Ascend glue's aclTensor views).
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
