// The aclnn operators the Ascend glue runs, one row each. The loader
// (cann_loader.h) finds each by name at run time: phase 1 <aclnn>GetWorkspaceSize
// and phase 2 <aclnn> (of the one type every aclnn phase 2 has,
// cann::aclnnPhase2Fn); the glue (glue.h) runs them on RunPhases. An
// operation whose operator takes SiluGrad's operands (gradOutput, self ->
// gradInput, as aclnnSiluBackward and aclnnGeluBackward do) runs through
// GradBackward with its row and nothing else.
#ifndef JAX_ASCEND_SILU_KERNEL_ASCEND_OPERATORS_H_
#define JAX_ASCEND_SILU_KERNEL_ASCEND_OPERATORS_H_

#include "ascend/chips.h"

namespace jas::ascend {

struct AclnnOperator {
  const char* op;     // the operation it serves, for messages: "SiluGrad"
  const char* aclnn;  // "aclnnSiluBackward"
  // Null: required, a CANN without it is incomplete. Otherwise the operator
  // is optional, looked for on its own in torch_npu's order, and a call of
  // `op` on a CANN without it is told this (what to install, what else to do).
  const char* advice;
  // The chip table's columns for it (chips.h): the classes CANN builds its
  // kernel for (null: every class), those where it takes bfloat16, and those
  // where it broadcasts gradOutput and self to gradInput by itself (null:
  // none, or operands that do not broadcast).
  bool ChipClass::*kernel;
  bool ChipClass::*bfloat16;
  bool ChipClass::*broadcasts;
};

inline constexpr AclnnOperator kSiluBackward{"SiluGrad", "aclnnSiluBackward", nullptr, nullptr,
                                             &ChipClass::bfloat16, &ChipClass::broadcasts};
inline constexpr AclnnOperator kSwiGluGrad{
    "SwiGluGrad", "aclnnSwiGluGrad",
    "SwiGluGrad on Ascend needs aclnnSwiGluGrad (ops-nn's swi_glu_grad): install CANN 8.0.RC1 or later "
    "(Atlas inference chips: 8.0.RC3, Atlas A3: 8.1.RC1; Ascend 950: 8.5), or run SwiGluGrad on the CPU; "
    "SiluGrad is unaffected",
    &ChipClass::swiglu_grad, &ChipClass::swiglu_grad_bfloat16, nullptr};

// Every row, in the order the loader looks for them (the required first).
inline constexpr const AclnnOperator* kAclnnOperators[] = {&kSiluBackward, &kSwiGluGrad};

}  // namespace jas::ascend

#endif  // JAX_ASCEND_SILU_KERNEL_ASCEND_OPERATORS_H_
