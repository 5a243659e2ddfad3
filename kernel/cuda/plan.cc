// Phase 1 of the CUDA backend: host-side checks (common/validate.h) and
// planning, no device calls.
#include <new>

#include "common/broadcast.h"
#include "common/validate.h"
#include "cuda/executor.h"
#include "cuda/silu_grad_cuda.h"

namespace jas {

Status SiluGradCudaGetWorkspaceSize(const TensorDesc* grad_output, const TensorDesc* self,
                                    const TensorDesc* grad_input, uint64_t* workspace_size,
                                    SiluGradCudaExecutor** executor) {
  CheckedOperands c;
  if (Status s = BeginPhase1(grad_output, self, grad_input, workspace_size, executor, &c); s != kSuccess) return s;

  auto* e = new (std::nothrow) SiluGradCudaExecutor;
  if (e == nullptr) return kErrInnerCreateExecutor;
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

Status SiluGradCudaDestroyExecutor(SiluGradCudaExecutor* executor) {
  if (executor == nullptr) return kErrParamNullptr;
  delete executor;
  return kSuccess;
}

}  // namespace jas
