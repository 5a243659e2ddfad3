// Phase 1's checks, once for every backend: the descriptors' dtypes, ranks,
// dims, strides, storage bounds, broadcasting and output overlap, with
// aclnn's status codes, and the checked layout every planner starts from.
// A backend that uses it accepts and rejects exactly what the others do.
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_VALIDATE_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_VALIDATE_H_

#include <cstdint>

#include "common/broadcast.h"
#include "silu_grad.h"

namespace jas {

// The three operands as checked: [0] gradOutput, [1] self, [2] gradInput.
struct CheckedOperands {
  DataType dtype = DataType::kFloat32;  // shared by all three, in the dtype table
  StridedShape views[3];                // each operand's own shape, strides made explicit
  int64_t offsets[3] = {};              // storage offsets, in elements
  int64_t numel[3] = {};                // elements of each view; numel[2] == 0: nothing to compute
  // gradInput's shape walked over all three (broadcast inputs at stride 0),
  // coalesced (broadcast.h). Only set when numel[2] > 0.
  StridedLoop loop;
};

// kErrParamNullptr for a null descriptor (or null dims of a rank > 0);
// kErrParamInvalid for an unsupported or mixed dtype, rank above kMaxRank, a
// negative dim, stride or offset, a view reaching past its storage_numel, an
// element count past int64, inputs that do not broadcast to gradInput's exact
// shape, or a gradInput whose elements overlap. kSuccess fills *checked.
Status CheckOperands(const TensorDesc* grad_output, const TensorDesc* self, const TensorDesc* grad_input,
                     CheckedOperands* checked);

// How every backend's phase 1 starts: the caller's outputs are cleared first,
// so no failure leaves them unset, then checked, then the operands.
template <class Executor>
Status BeginPhase1(const TensorDesc* grad_output, const TensorDesc* self, const TensorDesc* grad_input,
                   uint64_t* workspace_size, Executor** executor, CheckedOperands* checked) {
  if (executor != nullptr) *executor = nullptr;
  if (workspace_size != nullptr) *workspace_size = 0;
  if (workspace_size == nullptr || executor == nullptr) return kErrParamNullptr;
  return CheckOperands(grad_output, self, grad_input, checked);
}

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_VALIDATE_H_
