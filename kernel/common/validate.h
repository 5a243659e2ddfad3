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

// Which check CheckOperands refused the operands on, for error messages
// (the status is the contract).
enum class Refusal : int32_t {
  kNone,
  kNullDescriptor,
  kDtype,     // unsupported, or not shared by all three
  kRank,      // above kMaxRank, or negative
  kNullDims,  // rank > 0 without dims
  kNegativeDim,
  kNegativeLayout,   // a negative stride, offset or storage_numel
  kPastStorage,      // the view reaches past storage_numel
  kTooManyElements,  // an element count or address past int64
  kShape,            // gradInput is not the broadcast shape of the inputs
  kOverlap,          // gradInput's elements overlap
};

// The operands' names in messages, in CheckOperands' order.
inline constexpr const char* kOperandNames[3] = {"grad_output", "self", "grad_input"};

// The three operands as checked: [0] gradOutput, [1] self, [2] gradInput.
struct CheckedOperands {
  Refusal refusal = Refusal::kNone;     // set when CheckOperands fails
  int refused_operand = -1;             // the operand it concerns, -1 for all of them
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

// "self float32[5]" (operand 1), safe on any descriptor CheckOperands refused.
std::string OperandString(int i, const TensorDesc* desc);
// The same for an operand named `name` (SwiGluGrad's "yGrad", ...).
std::string OperandString(const char* name, const TensorDesc* desc);

// What a refusal means for these operands (as passed to CheckOperands) and
// what to do about it: "self has 9 dimensions, more than the 8 SiluGrad
// takes: reshape it".
std::string RefusalText(const CheckedOperands& checked, const TensorDesc* const operands[3]);

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
