// The CPU backend of the SwiGluGrad contract (swiglu_grad.h): CANN's two
// phases, with phase 2 shared between the calling thread and the helpers a
// Parallel provides, as SiluGrad's is (silu_grad_cpu.h).
#ifndef JAX_ASCEND_SILU_KERNEL_CPU_SWIGLU_GRAD_CPU_H_
#define JAX_ASCEND_SILU_KERNEL_CPU_SWIGLU_GRAD_CPU_H_

#include <cstdint>

#include "cpu/silu_grad_cpu.h"
#include "swiglu_grad.h"

namespace jas {

struct SwiGluGradExecutor;

// Phase 1, packed (aclnnSwiGluGradGetWorkspaceSize's signature): x = [A | B]
// along `dim`, out = [dA | dB]. The workspace is always 0 bytes.
Status SwiGluGradGetWorkspaceSize(const TensorDesc* y_grad, const TensorDesc* x, int64_t dim, const TensorDesc* out,
                                  uint64_t* workspace_size, SwiGluGradExecutor** executor);
// Phase 1, pair: A and B separate, dA and dB likewise.
Status SwiGluGradPairGetWorkspaceSize(const TensorDesc* y_grad, const TensorDesc* a, const TensorDesc* b,
                                      const TensorDesc* grad_a, const TensorDesc* grad_b, uint64_t* workspace_size,
                                      SwiGluGradExecutor** executor);
// Phase 2; releases the executor whatever it returns. `parallel` may be null.
Status SwiGluGradRun(void* workspace, uint64_t workspace_size, SwiGluGradExecutor* executor,
                     const Parallel* parallel);
// Releases an executor that will not be run.
Status SwiGluGradDestroyExecutor(SwiGluGradExecutor* executor);

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_CPU_SWIGLU_GRAD_CPU_H_
