// Phase 1 of SwiGluGrad for a backend whose plan is the checked layout
// itself (the CPU's and the CUDA backend's): the outputs cleared first, the
// operands checked (swiglu_validate.cc, so every backend accepts and refuses
// the same calls with the same codes), the executor made.
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_SWIGLU_PLAN_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_SWIGLU_PLAN_H_

#include <cstdint>
#include <new>

#include "swiglu_grad.h"

namespace jas {

// Plan, the backend's SwiGluGrad plan, is an Executor (the backend's
// executor type) made from the SwiGluLayout. The workspace is always 0 bytes.
template <class Plan, class Executor, class CheckFn>
Status PlanSwiGlu(uint64_t* workspace_size, Executor** executor, CheckFn&& check) {
  if (Status s = ClearPhase1Outputs(workspace_size, executor); s != kSuccess) return s;
  SwiGluLayout layout;
  if (Status s = check(&layout); s != kSuccess) return s;
  *executor = new (std::nothrow) Plan(layout);
  return *executor == nullptr ? kErrInnerCreateExecutor : kSuccess;
}

// The packed form (CheckSwiGluPacked).
template <class Plan, class Executor>
Status PlanSwiGluPacked(const TensorDesc* y_grad, const TensorDesc* x, int64_t dim, const TensorDesc* out,
                        uint64_t* workspace_size, Executor** executor) {
  return PlanSwiGlu<Plan>(workspace_size, executor, [&](SwiGluLayout* layout) {
    return CheckSwiGluPacked(y_grad, x, dim, out, layout, nullptr);
  });
}

// The pair form (CheckSwiGluPair).
template <class Plan, class Executor>
Status PlanSwiGluPair(const TensorDesc* y_grad, const TensorDesc* a, const TensorDesc* b,
                      const TensorDesc* grad_a, const TensorDesc* grad_b, uint64_t* workspace_size,
                      Executor** executor) {
  return PlanSwiGlu<Plan>(workspace_size, executor, [&](SwiGluLayout* layout) {
    return CheckSwiGluPair(y_grad, a, b, grad_a, grad_b, layout, nullptr);
  });
}

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_SWIGLU_PLAN_H_
