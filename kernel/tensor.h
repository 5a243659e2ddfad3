// The tensor vocabulary every operation's contract speaks (silu_grad.h,
// swiglu_grad.h): a strided view over a buffer, as aclCreateTensor describes
// one, the rank limit, and the backends' executor types. Plain C++: no XLA,
// no Python.
#ifndef JAX_ASCEND_SILU_KERNEL_TENSOR_H_
#define JAX_ASCEND_SILU_KERNEL_TENSOR_H_

#include <cstdint>

#include "common/dtype.h"
#include "common/status.h"

namespace jas {

inline constexpr int64_t kMaxRank = 8;

// Each backend's one executor type: what every operation's phase 1 (declared
// in its contract header) makes and the backend's one phase 2 runs, as every
// aclnn operator's phase 1 makes an aclOpExecutor. Defined in
// cpu/executor.h and cuda/executor.h; phase 2 in cpu/backend.h and
// cuda/backend.h.
struct CpuExecutor;
struct CudaExecutor;

// A strided view of a tensor (as aclCreateTensor describes one).
struct TensorDesc {
  DataType dtype = DataType::kFloat32;
  int64_t rank = 0;
  const int64_t* dims = nullptr;     // `rank` entries; may be null when rank == 0
  const int64_t* strides = nullptr;  // element strides (>= 0); null = row-major contiguous
  int64_t offset = 0;                // storage offset, in elements
  int64_t storage_numel = 0;         // elements addressable from `data`: reads and writes stay below it
  void* data = nullptr;              // may be null in phase 1; must be set before phase 2 if non-empty
};

// How every operation's phase 1 starts, on every backend: the caller's
// outputs are cleared first, so that no failure leaves them unset, then
// checked.
template <class Executor>
Status ClearPhase1Outputs(uint64_t* workspace_size, Executor** executor) {
  if (executor != nullptr) *executor = nullptr;
  if (workspace_size != nullptr) *workspace_size = 0;
  return workspace_size == nullptr || executor == nullptr ? kErrParamNullptr : kSuccess;
}

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_TENSOR_H_
