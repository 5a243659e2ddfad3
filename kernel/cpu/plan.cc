// Phase 1 of every elementwise gradient g * f'(x) over broadcast operands
// (SiluGrad's): validate the descriptors (common/validate.h), plan the
// passes, size the workspace; each such operation's entry point is a line
// naming its block functions. Also the executor's release.
#include <new>

#include "common/broadcast.h"
#include "common/validate.h"
#include "cpu/backend.h"
#include "cpu/executor.h"
#include "silu_grad.h"

namespace jas {

namespace {

void SetElementBytes(Loop* loop, int64_t a, int64_t b, int64_t out) {
  loop->elem_bytes[0] = a;
  loop->elem_bytes[1] = b;
  loop->elem_bytes[2] = out;
}

}  // namespace

Status PlanGrad(GradBlocks BlockKernels::Entry::*blocks, const TensorDesc* grad_output, const TensorDesc* self,
                const TensorDesc* grad_input, uint64_t* workspace_size, CpuExecutor** executor) {
  CheckedOperands c;
  if (Status s = BeginPhase1(grad_output, self, grad_input, workspace_size, executor, &c); s != kSuccess) return s;

  auto* e = new (std::nothrow) GradPlan;
  if (e == nullptr) return kErrInnerCreateExecutor;
  e->blocks = blocks;
  e->dtype = c.dtype;
  for (int op = 0; op < 3; ++op) e->offsets[op] = c.offsets[op];
  e->grad_output = grad_output->data;
  e->self = self->data;
  e->grad_input = grad_input->data;

  const int64_t numel = c.numel[2], x_numel = c.numel[1];
  if (numel == 0) {  // nothing to plan: phase 2 returns at once
    e->main.numel = 0;
    *executor = e;
    return kSuccess;
  }

  const int64_t elem = ElementBytes(e->dtype);
  // When self is broadcast, f'(self) is computed once per element of self,
  // unless its size in bytes would not fit the workspace size.
  uint64_t precompute_bytes = 0;
  e->precompute = x_numel > 0 && x_numel <= numel / 2 &&
                  !__builtin_mul_overflow(static_cast<uint64_t>(x_numel), uint64_t{8}, &precompute_bytes);
  if (e->precompute) {
    // The workspace holds f'(self) in double, contiguously in self's own shape:
    // written by a pass over self, read by the main pass through gradInput's.
    const StridedShape& x = c.views[1];
    StridedShape workspace = x;
    RowMajorStrides(x.rank, x.dims, workspace.strides);
    BroadcastLoop(nullptr, &x, workspace, &e->pre);
    SetElementBytes(&e->pre, elem, elem, 8);
    BroadcastLoop(&c.views[0], &workspace, c.views[2], &e->main);
    SetElementBytes(&e->main, elem, 8, elem);
    e->workspace_bytes = precompute_bytes;
  } else {
    static_cast<StridedLoop&>(e->main) = c.loop;
    SetElementBytes(&e->main, elem, elem, elem);
    e->stream_stores = numel >= kStreamStoreMinBytes / elem;
  }
  *workspace_size = e->workspace_bytes;
  *executor = e;
  return kSuccess;
}

Status SiluGradGetWorkspaceSize(const TensorDesc* grad_output, const TensorDesc* self,
                                const TensorDesc* grad_input, uint64_t* workspace_size, CpuExecutor** executor) {
  return PlanGrad(&BlockKernels::Entry::silu, grad_output, self, grad_input, workspace_size, executor);
}

Status CpuDestroyExecutor(CpuExecutor* executor) {
  if (executor == nullptr) return kErrParamNullptr;
  delete executor;
  return kSuccess;
}

}  // namespace jas
