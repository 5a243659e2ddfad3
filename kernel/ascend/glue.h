// The Ascend path without XLA: aclTensor views over device buffers, then
// CANN's two-phase aclnnSiluBackward on a stream, through the functions
// cann_loader.h found at run time. The XLA handler (handler.cc) only
// decodes its buffers into kernel descriptors and turns the Outcome into an ffi::Error;
// tests drive this function directly against the fake CANN of
// tests/ascend_fake (loaded the same way), since XLA cannot call an "ASCEND"
// handler without an Ascend PJRT plugin.
#ifndef JAX_ASCEND_SILU_KERNEL_ASCEND_GLUE_H_
#define JAX_ASCEND_SILU_KERNEL_ASCEND_GLUE_H_

#include <cstdint>
#include <string>

#include "ascend/cann.h"
#include "ascend/cann_loader.h"
#include "ascend/chips.h"
#include "silu_grad.h"

namespace jas::ascend {

// The kernel's DataType is numbered as aclDataType; this is the one place
// the two meet.
constexpr cann::aclDataType AclDataType(DataType t) { return static_cast<cann::aclDataType>(t); }

// Where the device workspace comes from (XLA's scratch allocator in the
// handler). `allocate` returns null when it cannot provide `bytes`.
struct WorkspaceSource {
  void* context = nullptr;
  void* (*allocate)(void* context, uint64_t bytes) = nullptr;
};

enum class Failure {
  kNone = 0,
  kNoCann,        // CANN was not found, or lacks a function (no CANN call made)
  kNoContext,     // no current ACL context (or device) on the calling thread (no operator call made)
  kOperands,      // the checks of every backend (common/validate.h) refused them with `status` (no CANN call made)
  kCreateTensor,  // aclCreateTensor returned null
  kPhase1,        // aclnnSiluBackwardGetWorkspaceSize returned `status`
  kWorkspace,     // the workspace source could not provide the bytes phase 1 asked for
  kPhase2,        // aclnnSiluBackward returned `status`
};

struct Outcome {
  Failure failure = Failure::kNone;
  cann::aclnnStatus status = 0;  // the aclnn status for kOperands / kPhase1 / kPhase2, the aclError for kNoContext
  std::string message;           // names the call, the status code and CANN's own message
  bool ok() const { return failure == Failure::kNone; }
};

// The chip of the calling thread's current device, as the operator will see it.
struct CurrentChip {
  int32_t device = -1;
  const char* soc_name = nullptr;  // aclrtGetSocName's answer, for messages (may be null)
  const ChipClass* chip = nullptr;
  std::string source;              // how the class was found, for messages
};

// The runtime's preconditions, checked before any operator call: CANN's phase
// 1 reads the current device's platform (opbase's GetCurrentPlatformInfo ->
// aclrtGetDevice), so without a current context it sees an unknown chip.
// Fills *chip from the device's NpuArch (aclrtGetDeviceInfo) or else its SoC
// name; on failure returns a kNoContext Outcome naming the requirement.
Outcome CheckContext(const CannApi& api, CurrentChip* chip);

// grad_input = grad_output * s'(self), the inputs broadcast to grad_input's
// shape. The operands are checked first as on every backend (CheckOperands:
// the same refusals with the same aclnn codes, before any CANN call); an
// empty grad_input then makes no CANN call at all. Otherwise needs a current
// ACL context on the calling thread (CheckContext). Where the operator
// broadcasts by itself (NpuArch 3510: Ascend 950/350) the operands go over
// with their own shapes; elsewhere as stride-0 views with grad_input's shape,
// which CANN's operator accepts and makes contiguous in its workspace. Tensors
// are destroyed on every path; the workspace is requested only when phase 1
// asks for a non-zero size; an executor whose phase 2 does not run is
// released with aclDestroyAclOpExecutor where CANN has it.
Outcome SiluBackward(const Cann& cann, cann::aclrtStream stream, const WorkspaceSource& workspace,
                     const TensorDesc& grad_output, const TensorDesc& self, const TensorDesc& grad_input);

// "ACLNN_ERR_PARAM_INVALID", ..., or the class of an unnamed code
// ("an unnamed internal error").
std::string StatusLabel(cann::aclnnStatus status);

}  // namespace jas::ascend

#endif  // JAX_ASCEND_SILU_KERNEL_ASCEND_GLUE_H_
