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
// dtype; ranks 0..kMaxRank (tensor.h). Each backend's header: cpu/silu_grad_cpu.h,
// cuda/silu_grad_cuda.h, ascend/glue.h. Plain C++: no XLA, no Python.
#ifndef JAX_ASCEND_SILU_KERNEL_SILU_GRAD_H_
#define JAX_ASCEND_SILU_KERNEL_SILU_GRAD_H_

#include "tensor.h"  // TensorDesc, kMaxRank, the dtypes and status codes

#endif  // JAX_ASCEND_SILU_KERNEL_SILU_GRAD_H_
