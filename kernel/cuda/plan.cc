// Phase 1 of the CUDA backend: host-side checks (common/validate.h) and
// planning, no device calls (each gradient g * f'(x) names its launch in its
// own .cu); and the one phase 2, which hands a plan to its launch.
#include <memory>
#include <new>

#include "common/broadcast.h"
#include "common/swiglu_plan.h"
#include "common/validate.h"
#include "cuda/backend.h"
#include "cuda/executor.h"
#include "swiglu_grad.h"

namespace jas {

Status PlanGradCuda(GradCudaPlan::LaunchFn launch, const TensorDesc* grad_output, const TensorDesc* self,
                    const TensorDesc* grad_input, uint64_t* workspace_size, CudaExecutor** executor) {
  CheckedOperands c;
  if (Status s = BeginPhase1(grad_output, self, grad_input, workspace_size, executor, &c); s != kSuccess) return s;

  auto* e = new (std::nothrow) GradCudaPlan;
  if (e == nullptr) return kErrInnerCreateExecutor;
  e->launch = launch;
  e->dtype = c.dtype;
  e->numel = c.numel[2];  // 0: an empty output launches nothing
  if (e->numel > 0) {
    e->loop = c.loop;
    int64_t row_major[kMaxRank];
    RowMajorStrides(e->loop.rank, e->loop.dims, row_major);
    e->contiguous = true;
    for (int op = 0; op < 3; ++op) {
      for (int64_t j = 0; j < e->loop.rank; ++j) {
        e->contiguous = e->contiguous && (e->loop.dims[j] == 1 || e->loop.strides[op][j] == row_major[j]);
      }
    }
  }
  for (int op = 0; op < 3; ++op) e->offsets[op] = c.offsets[op];
  e->grad_output = grad_output->data;
  e->self = self->data;
  e->grad_input = grad_input->data;
  *executor = e;
  return kSuccess;
}

// Broadcast operands are read through stride-0 dimensions: no workspace.
Status GradCudaPlan::Launch(void* workspace, uint64_t workspace_size, cudaStream_t stream,
                            cudaError_t* launch_error) const {
  (void)workspace;
  (void)workspace_size;
  if (numel == 0) return kSuccess;  // nothing is launched
  if (grad_output == nullptr || self == nullptr || grad_input == nullptr) {
    return kErrParamNullptr;
  }
  return launch(*this, stream, launch_error);
}

// SwiGluGrad's checks are the CPU's (common/swiglu_plan.h), so both backends
// accept and refuse exactly the same calls with the same codes.
Status SwiGluGradCudaGetWorkspaceSize(const TensorDesc* y_grad, const TensorDesc* x, int64_t dim,
                                      const TensorDesc* out, uint64_t* workspace_size,
                                      CudaExecutor** executor) {
  return PlanSwiGluPacked<SwiGluGradCudaPlan>(y_grad, x, dim, out, workspace_size, executor);
}

Status SwiGluGradCudaPairGetWorkspaceSize(const TensorDesc* y_grad, const TensorDesc* a, const TensorDesc* b,
                                          const TensorDesc* grad_a, const TensorDesc* grad_b,
                                          uint64_t* workspace_size, CudaExecutor** executor) {
  return PlanSwiGluPair<SwiGluGradCudaPlan>(y_grad, a, b, grad_a, grad_b, workspace_size, executor);
}

Status CudaRun(void* workspace, uint64_t workspace_size, CudaExecutor* executor, cudaStream_t stream,
               cudaError_t* launch_error) {
  if (executor == nullptr) return kErrParamNullptr;
  const std::unique_ptr<CudaExecutor> owned(executor);  // run once
  return executor->Launch(workspace, workspace_size, stream, launch_error);
}

Status CudaDestroyExecutor(CudaExecutor* executor) {
  if (executor == nullptr) return kErrParamNullptr;
  delete executor;
  return kSuccess;
}

}  // namespace jas
