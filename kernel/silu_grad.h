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
//   phase 2, the backend's one phase 2 for every operation (CpuRun,
//            CudaRun: cpu/backend.h, cuda/backend.h), executes the plan on
//            the backend's stream and releases the executor; its
//            DestroyExecutor releases one never run.
// gradOutput and self broadcast (NumPy rules, right-aligned) to gradInput,
// whose shape must be exactly their broadcast shape; all three share one
// dtype; ranks 0..kMaxRank (tensor.h). Ascend runs CANN's own operator
// (ascend/glue.h). Plain C++: no XLA, no Python.
#ifndef JAX_ASCEND_SILU_KERNEL_SILU_GRAD_H_
#define JAX_ASCEND_SILU_KERNEL_SILU_GRAD_H_

#include <cstdint>
#include <string>

#include "tensor.h"  // TensorDesc, kMaxRank, the executor types, the dtypes and status codes

namespace jas {

// Phase 1 on the CPU (common/validate.h's checks). On success *executor owns
// the plan, for CpuRun.
Status SiluGradGetWorkspaceSize(const TensorDesc* grad_output, const TensorDesc* self,
                                const TensorDesc* grad_input, uint64_t* workspace_size, CpuExecutor** executor);

// Phase 1 on NVIDIA GPUs, for CudaRun (host only, nothing touches the
// device). The same checks, so every invalid input gets the same status code
// on every backend; `data` pointers are device pointers. Broadcast operands
// are read through stride-0 dimensions, so this plan asks for no workspace;
// callers still honour whatever size is returned, as the contract allows one.
Status SiluGradCudaGetWorkspaceSize(const TensorDesc* grad_output, const TensorDesc* self,
                                    const TensorDesc* grad_input, uint64_t* workspace_size,
                                    CudaExecutor** executor);

// Loads every kernel CudaRun may launch for SiluGrad into each visible
// device's primary context (cuda/backend.h says why and when). "" on
// success, else why not.
std::string SiluGradCudaLoadKernels();

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_SILU_GRAD_H_
