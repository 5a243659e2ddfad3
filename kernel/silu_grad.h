// SiluGrad: gradInput = gradOutput * s'(x), s(x) = x * sigmoid(x).
//
// The contract every backend implements, modelled on Ascend CANN's
// aclnnSiluBackward: the tensor descriptors, dtypes (common/dtype.h), status
// codes with aclnn's numbers (common/status.h), the rank limit, and two
// phases with one signature shape:
//   phase 1, <Backend>GetWorkspaceSize(gradOutput, self, gradInput,
//            &workspace_size, &executor), validates the descriptors (all
//            backends through common/validate.h, so they accept and reject
//            the same ones with the same codes), plans the work, and returns
//            the workspace bytes and an executor;
//   phase 2, <Backend>Run(workspace, workspace_size, executor, <stream>),
//            executes the plan on the backend's stream and releases the
//            executor; <Backend>DestroyExecutor releases one never run.
// gradOutput and self broadcast (NumPy rules, right-aligned) to gradInput,
// whose shape must be exactly their broadcast shape; all three share one
// dtype; ranks 0..kMaxRank. Each backend's header: cpu/silu_grad_cpu.h,
// cuda/silu_grad_cuda.h, ascend/glue.h. Plain C++: no XLA, no Python.
#ifndef JAX_ASCEND_SILU_KERNEL_SILU_GRAD_H_
#define JAX_ASCEND_SILU_KERNEL_SILU_GRAD_H_

#include <cstdint>

#include "common/dtype.h"
#include "common/status.h"

namespace jas {

inline constexpr int64_t kMaxRank = 8;

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

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_SILU_GRAD_H_
