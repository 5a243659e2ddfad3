// Phase 1's checks, once for every backend: the descriptors' dtypes, ranks,
// dims, strides, storage bounds, broadcasting and output overlap, with
// aclnn's status codes, and the checked layout every planner starts from.
// A backend that uses it accepts and rejects exactly what the others do.
#ifndef JAX_ASCEND_SILU_KERNEL_COMMON_VALIDATE_H_
#define JAX_ASCEND_SILU_KERNEL_COMMON_VALIDATE_H_

#include <cstdint>
#include <string>

#include "common/broadcast.h"
#include "silu_grad.h"

namespace jas {

// The operands' names in messages, in CheckOperands' order.
inline constexpr const char* kOperandNames[3] = {"grad_output", "self", "grad_input"};

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
// On failure *why (where `why` is not null) says what and what to do, as
// every operation's checks do (swiglu_grad.h): "self has 9 dimensions, more
// than the 8 SiluGrad takes: reshape it".
Status CheckOperands(const TensorDesc* grad_output, const TensorDesc* self, const TensorDesc* grad_input,
                     CheckedOperands* checked, std::string* why = nullptr);

// "self float32[5]" (operand 1), safe on any descriptor CheckOperands refused.
std::string OperandString(int i, const TensorDesc* desc);
// The same for an operand named `name` (SwiGluGrad's "yGrad", ...).
std::string OperandString(const char* name, const TensorDesc* desc);

// How every backend's phase 1 of SiluGrad starts: ClearPhase1Outputs
// (tensor.h), then the operands.
template <class Executor>
Status BeginPhase1(const TensorDesc* grad_output, const TensorDesc* self, const TensorDesc* grad_input,
                   uint64_t* workspace_size, Executor** executor, CheckedOperands* checked) {
  if (Status s = ClearPhase1Outputs(workspace_size, executor); s != kSuccess) return s;
  return CheckOperands(grad_output, self, grad_input, checked);
}

}  // namespace jas

#endif  // JAX_ASCEND_SILU_KERNEL_COMMON_VALIDATE_H_
