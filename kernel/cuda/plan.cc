// Phase 1 of the CUDA backend: host-side checks and planning, no device calls.
#include <algorithm>
#include <new>

#include "common/broadcast.h"
#include "cuda/executor.h"
#include "cuda/silu_grad_cuda.h"
#include "silu_grad.h"

namespace jas {

Status SiluGradCudaGetWorkspaceSize(const TensorDesc* grad_output, const TensorDesc* self,
                                    const TensorDesc* grad_input, uint64_t* workspace_size,
                                    SiluGradCudaExecutor** executor) {
  // Outputs are cleared first, so no failure leaves a caller's variable unset.
  if (executor != nullptr) *executor = nullptr;
  if (workspace_size != nullptr) *workspace_size = 0;
  if (workspace_size == nullptr || executor == nullptr) return kErrParamNullptr;
  // The CPU phase 1 is the one place operands are checked: both backends
  // accept and reject exactly the same descriptors, with the same codes.
  SiluGradExecutor* checked = nullptr;
  uint64_t cpu_workspace = 0;
  if (Status s = SiluGradGetWorkspaceSize(grad_output, self, grad_input, &cpu_workspace, &checked);
      s != kSuccess) {
    return s;
  }
  SiluGradDestroyExecutor(checked);

  const int64_t rank = grad_input->rank;
  // An empty output launches nothing. Its other dims may multiply past int64
  // (phase 1 accepts that), so no product or stride is formed for it.
  if (std::find(grad_input->dims, grad_input->dims + rank, 0) != grad_input->dims + rank) {
    auto* e = new (std::nothrow) SiluGradCudaExecutor;  // numel 0
    if (e == nullptr) return kErrInnerCreateExecutor;
    e->dtype = grad_input->dtype;
    *executor = e;
    return kSuccess;
  }
  int64_t full[3][kMaxRank];
  const TensorDesc* ops[3] = {grad_output, self, grad_input};
  for (int op = 0; op < 3; ++op) {
    if (!BroadcastStrides(ops[op]->rank, ops[op]->dims, ops[op]->strides, rank, grad_input->dims,
                          full[op])) {
      return kErrParamInvalid;  // unreachable once phase 1 accepted the shapes
    }
  }
  auto* e = new (std::nothrow) SiluGradCudaExecutor;
  if (e == nullptr) return kErrInnerCreateExecutor;
  e->dtype = grad_input->dtype;
  e->rank = 0;
  e->numel = 1;
  for (int64_t j = 0; j < rank; ++j) {
    e->numel *= grad_input->dims[j];
    if (grad_input->dims[j] == 1) continue;  // size-1 dims move nothing
    e->dims[e->rank] = grad_input->dims[j];
    for (int op = 0; op < 3; ++op) e->strides[op][e->rank] = full[op][j];
    ++e->rank;
  }
  if (e->rank == 0) {  // a single element
    e->rank = 1;
    e->dims[0] = 1;
    for (int op = 0; op < 3; ++op) e->strides[op][0] = 0;
  }
  int64_t row_major[kMaxRank];
  RowMajorStrides(e->rank, e->dims, row_major);
  e->contiguous = true;
  for (int op = 0; op < 3; ++op) {
    for (int64_t j = 0; j < e->rank; ++j) {
      e->contiguous = e->contiguous && (e->dims[j] == 1 || e->strides[op][j] == row_major[j]);
    }
    e->offsets[op] = ops[op]->offset;
  }
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
