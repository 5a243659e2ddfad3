// The Ascend path without XLA: aclTensor views over device buffers, then
// the two phases of an aclnn operator of the table (operators.h:
// aclnnSiluBackward, aclnnSwiGluGrad) on a stream, through the functions
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
#include "ascend/operators.h"
#include "silu_grad.h"
#include "swiglu_grad.h"

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
  kChip,          // the current device's chip class has no kernel of the operator (no operator call made)
  kNoContext,     // no current ACL context (or device) on the calling thread (no operator call made)
  kOperands,      // the checks of every backend (common/validate.h) refused them with `status` (no CANN call made)
  kCreateTensor,  // aclCreateTensor returned null
  kPhase1,        // aclnn...GetWorkspaceSize returned `status`
  kWorkspace,     // the workspace source could not provide the bytes phase 1 (or the pair form's staging) needs
  kPhase2,        // the operator's phase 2 (aclnnSiluBackward, ...) returned `status`
  kCopy,          // aclrtMemcpyAsync returned the aclError `status` (SwiGluGrad's pair form)
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
// name; on failure returns a kNoContext Outcome naming the requirement of
// `op` ("SiluGrad") and the operator that reads the chip (`aclnn`).
Outcome CheckContext(const CannApi& api, CurrentChip* chip, const char* op = "SiluGrad",
                     const char* aclnn = "aclnnSiluBackward");

// grad_input = grad_output * f'(self) by `op`, an operator of the table with
// aclnnSiluBackward's operands (kSiluBackward: f = silu), the inputs
// broadcast to grad_input's shape. The operands are checked first as on
// every backend (CheckOperands: the same refusals with the same aclnn codes,
// before any CANN call); an empty grad_input then makes no CANN call at all.
// Otherwise needs a CANN with the operator, a current ACL context on the
// calling thread (CheckContext) and a chip class it has a kernel for. Where
// the operator broadcasts by itself (its row's column: aclnnSiluBackward on
// NpuArch 3510, Ascend 950/350) the operands go over with their own shapes;
// elsewhere as stride-0 views with grad_input's shape, which CANN's operator
// accepts and makes contiguous in its workspace. Tensors are destroyed on
// every path; the workspace is requested only when phase 1 asks for a
// non-zero size; an executor whose phase 2 does not run is released with
// aclDestroyAclOpExecutor where CANN has it.
Outcome GradBackward(const Cann& cann, const AclnnOperator& op, cann::aclrtStream stream,
                     const WorkspaceSource& workspace, const TensorDesc& grad_output, const TensorDesc& self,
                     const TensorDesc& grad_input);

// SwiGluGrad (swiglu_grad.h) through CANN's aclnnSwiGluGrad. The operands are
// checked first as on every backend (CheckSwiGluPacked / CheckSwiGluPair:
// the same refusals and aclnn codes, before any CANN call; empty tensors
// are refused there, as CANN refuses them). Then a CANN with aclnnSwiGluGrad
// (Cann::ok(kSwiGluGrad)), a current ACL context (CheckContext), and a chip class
// CANN builds the kernel for (chips.h; kChip before any operator call
// otherwise). bfloat16 on a class without it (Ascend310P) is left to CANN,
// whose refusal the message explains.
//  - packed (CANN's layout): y_grad, x and out go over as dense aclTensors of
//    their own shapes, `dim` as given.
//  - pair: CANN has no two-operand form. A and B are copied (aclrtMemcpyAsync,
//    device to device, on `stream`) into one staging block taken from
//    `workspace`, as x = [a | b] of rank 1 (dim 0) with y_grad viewed flat;
//    aclnnSwiGluGrad writes out = [dA | dB] into the same block, and the
//    halves are copied into grad_a and grad_b on the stream. The staging is
//    4 * numel elements (x and out), requested before phase 1; CANN's own
//    workspace is a second request, made only when non-zero.
// Tensors and executors are released on every path as GradBackward's are.
Outcome SwiGluGradPacked(const Cann& cann, cann::aclrtStream stream, const WorkspaceSource& workspace,
                         const TensorDesc& y_grad, const TensorDesc& x, int64_t dim, const TensorDesc& out);
Outcome SwiGluGradPair(const Cann& cann, cann::aclrtStream stream, const WorkspaceSource& workspace,
                       const TensorDesc& y_grad, const TensorDesc& a, const TensorDesc& b, const TensorDesc& grad_a,
                       const TensorDesc& grad_b);

// Where the pair form's halves sit in its staging block: x = [a | b] at 0,
// out = [dA | dB] at PairOutOffset, the block PairStagingBytes long (each
// half `half_bytes`, numel * element size). The out region starts on a
// 512-byte boundary, as CANN aligns its own workspace blocks.
constexpr uint64_t PairOutOffset(uint64_t half_bytes) { return (2 * half_bytes + 511) / 512 * 512; }
constexpr uint64_t PairStagingBytes(uint64_t half_bytes) { return PairOutOffset(half_bytes) + 2 * half_bytes; }

// "ACLNN_ERR_PARAM_INVALID", ..., or the class of an unnamed code
// ("an unnamed internal error").
std::string StatusLabel(cann::aclnnStatus status);

}  // namespace jas::ascend

#endif  // JAX_ASCEND_SILU_KERNEL_ASCEND_GLUE_H_
