// SwiGluGrad on the CPU: phase 1 checks the operands and keeps their layout
// (common/swiglu_plan.h); phase 2 walks the rows in chunks (RunInChunks) with
// the ISA's block function.
#include <algorithm>
#include <memory>

#include "common/swiglu_plan.h"
#include "cpu/backend.h"
#include "cpu/executor.h"
#include "cpu/isa.h"
#include "swiglu_grad.h"

namespace jas {
namespace {

struct Walk {
  const SwiGluLayout* layout;
  SwiGluBlockFn fn;
  int64_t bytes;
};

// Elements [begin, end) in row-major order over the rows of `inner`.
void RunRows(const void* context, int64_t begin, int64_t end) {
  const Walk& w = *static_cast<const Walk*>(context);
  const SwiGluLayout& l = *w.layout;
  const char* g = static_cast<const char*>(l.y_grad);
  const char* a = static_cast<const char*>(l.a);
  const char* b = static_cast<const char*>(l.b);
  char* da = static_cast<char*>(l.grad_a);
  char* db = static_cast<char*>(l.grad_b);
  for (int64_t i = begin; i < end;) {
    const int64_t r = i / l.inner, c = i % l.inner;
    const int64_t n = std::min(l.inner - c, end - i);
    const int64_t at = (r * l.row + c) * w.bytes;
    w.fn(g + i * w.bytes, a + at, b + at, da + at, db + at, n);
    i += n;
  }
}

}  // namespace

Status SwiGluGradGetWorkspaceSize(const TensorDesc* y_grad, const TensorDesc* x, int64_t dim, const TensorDesc* out,
                                  uint64_t* workspace_size, CpuExecutor** executor) {
  return PlanSwiGluPacked<SwiGluGradPlan>(y_grad, x, dim, out, workspace_size, executor);
}

Status SwiGluGradPairGetWorkspaceSize(const TensorDesc* y_grad, const TensorDesc* a, const TensorDesc* b,
                                      const TensorDesc* grad_a, const TensorDesc* grad_b, uint64_t* workspace_size,
                                      CpuExecutor** executor) {
  return PlanSwiGluPair<SwiGluGradPlan>(y_grad, a, b, grad_a, grad_b, workspace_size, executor);
}

Status SwiGluGradPlan::Run(void*, uint64_t, const Parallel* parallel) const {
  const BlockKernels* kernels = KernelsFor(isa);
  if (kernels == nullptr) return kErrInnerNullptr;
  const Walk walk{&layout, kernels->by_type[DtypeIndex(layout.dtype)].swiglu, FindDtype(layout.dtype)->bytes};
  return RunChunks(layout.numel(), parallel, &RunRows, &walk);
}

}  // namespace jas
